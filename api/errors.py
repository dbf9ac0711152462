"""One error body for every refusal: ``{"error": {"code": ..., "message": ...}}``.

Handlers turn :class:`ApiError`, the project's :class:`~choreo.errors.ChoreoError`
family, request validation errors and Redis outages into that body with the
right status, so a client reads every 4xx and 5xx the same way.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from redis.exceptions import RedisError
from starlette.exceptions import HTTPException as StarletteHTTPException

from choreo.errors import AudioError, ChoreoError, ParameterError, StorageError
from choreo.service.storage import ObjectMissing

__all__ = ["ApiError", "install_error_handlers"]

log = logging.getLogger(__name__)


class ApiError(Exception):
    """A refusal with an HTTP status, a machine-readable code and a message for people."""

    def __init__(
        self, status: int, code: str, message: str, *, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers

    @classmethod
    def not_found(cls, what: str, ident: str) -> ApiError:
        return cls(404, "not_found", f"no {what} {ident!r} for this key's team")


def _body(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


def _choreo_status(exc: ChoreoError) -> int:
    if isinstance(exc, ObjectMissing):
        return 404
    if isinstance(exc, StorageError):
        return 503
    if isinstance(exc, AudioError):
        return 415 if exc.code == "not_audio" else 422
    if isinstance(exc, ParameterError):
        return 409 if exc.code in ("already_published", "job_not_done") else 422
    return 500


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers on ``app``."""

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return _body(exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(ChoreoError)
    async def _choreo_error(_: Request, exc: ChoreoError) -> JSONResponse:
        return _body(_choreo_status(exc), exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
            problems.append(f"{where}: {err.get('msg', 'invalid')}")
        return _body(422, "invalid_request", "; ".join(problems) or "invalid request")

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _body(exc.status_code, "http_error", str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(RedisError)
    async def _redis_down(_: Request, exc: RedisError) -> JSONResponse:
        return _body(503, "index_unavailable", f"the job index (Redis) is unavailable: {exc}")

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return _body(500, "internal_error", f"internal error ({type(exc).__name__}); it has been logged")
