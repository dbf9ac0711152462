"""One error body for every refusal: ``{"error": {"code": ..., "message": ...}}``.

Handlers turn the project's :class:`~choreo.errors.ChoreoError` family (the
API's own refusals, :class:`ApiError`, among them), request validation errors
and Redis outages into that body with the right status, so a client reads every
4xx and 5xx the same way. What a client reads never names a path, a storage key
or a server (``public_message``); the log line of a 5xx keeps the details.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from redis.exceptions import RedisError
from starlette.exceptions import HTTPException as StarletteHTTPException

from choreo.errors import (
    AudioError,
    ChoreoError,
    ConflictError,
    NotFoundError,
    ParameterError,
    StorageError,
    TooLargeError,
)
from choreo.service.redact import public_message
from choreo.service.storage import ObjectMissing

__all__ = ["ApiError", "BodyTooLarge", "error_response", "install_error_handlers"]

log = logging.getLogger(__name__)


class ApiError(ChoreoError):
    """A refusal with an HTTP status, a machine-readable code and a message for people.

    What the API refuses on its own (no key, a bad range, another team's object) carries its
    status and any headers (``Retry-After``, ``WWW-Authenticate``); the rest of the error tree
    gets its status from its class (:func:`_choreo_status`). The message is the API's own,
    written for the client, so it goes out as it is.
    """

    def __init__(
        self, status: int, code: str, message: str, *, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message, code=code)
        self.status = status
        self.headers = headers

    @classmethod
    def not_found(cls, what: str, ident: str) -> ApiError:
        return cls(404, "not_found", f"no {what} {ident!r} for this key's team")


class BodyTooLarge(StarletteHTTPException):
    """The body grew past its route's limit while it was read (see :mod:`api.guard`).

    An HTTP exception, so FastAPI's body reading passes it on instead of
    calling it a parse error.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the body is larger than the limit of {limit} bytes")


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """The one error body."""
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


def _choreo_status(exc: ChoreoError) -> int:
    if isinstance(exc, (ObjectMissing, NotFoundError)):
        return 404
    if isinstance(exc, StorageError):
        return 503
    if isinstance(exc, AudioError):
        return 415 if exc.code == "not_audio" else 422
    if isinstance(exc, ConflictError):
        return 409
    if isinstance(exc, TooLargeError):
        return 413
    if isinstance(exc, ParameterError):
        return 422
    return 500


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers on ``app``."""

    @app.exception_handler(ChoreoError)
    async def _choreo_error(request: Request, exc: ChoreoError) -> JSONResponse:
        if isinstance(exc, ApiError):
            return error_response(exc.status, exc.code, exc.message, exc.headers)
        status = _choreo_status(exc)
        if status >= 500:
            log.warning("%s on %s %s: %s", exc.code, request.method, request.url.path, exc)
            if isinstance(exc, StorageError):
                return error_response(status, exc.code, "storage is unavailable; try again")
            return error_response(status, exc.code, "internal error; it has been logged")
        if isinstance(exc, ObjectMissing):
            return error_response(status, exc.code, "a stored object of this request is missing")
        return error_response(status, exc.code, public_message(exc.message))

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
            value = err.get("input")
            if err.get("type") == "string_pattern_mismatch" and isinstance(value, str) and len(value) <= 80:
                where = f"{where}: {value!r}"  # name the value that does not fit, as the service's checks do
            problems.append(f"{where}: {err.get('msg', 'invalid')}")
        return error_response(422, "invalid_request", "; ".join(problems) or "invalid request")

    @app.exception_handler(BodyTooLarge)
    async def _too_large(_: Request, exc: BodyTooLarge) -> JSONResponse:
        return error_response(413, "too_large", str(exc.detail))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error_response(exc.status_code, "http_error", str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(RedisError)
    async def _redis_down(request: Request, exc: RedisError) -> JSONResponse:
        log.warning("Redis failed on %s %s: %s", request.method, request.url.path, exc)
        return error_response(503, "index_unavailable", "the job index is unavailable; try again")

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return error_response(500, "internal_error", "internal error; it has been logged")
