"""The links of the OpenAPI document: which answer's ids the next operations take.

OpenAPI links say that a value of one operation's answer is a parameter or the
body of another: the track an upload names is what a submit renders, the jobs
a submit made are what a client asks about and downloads. Clients generated
from the document and stateful testers (Schemathesis, ``tests/service/test_fuzz.py``)
follow them, so they chain upload -> submit -> job -> artifacts. FastAPI does
not write links, so :func:`install_links` adds them to the document it builds.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

__all__ = ["LINKS", "install_links"]


def _op(path: str, method: str) -> str:
    return "#/paths/" + path.replace("~", "~0").replace("/", "~1") + "/" + method


def _job_links(job_id: str) -> dict[str, Any]:
    """The operations on one job, its id found at ``job_id`` (a runtime expression)."""
    param = {"job_id": job_id}
    return {
        "GetJob": {"operationRef": _op("/v1/jobs/{job_id}", "get"), "parameters": param},
        "GetArtifacts": {"operationRef": _op("/v1/jobs/{job_id}/artifacts", "get"), "parameters": param},
        "GetTimeline": {"operationRef": _op("/v1/jobs/{job_id}/timeline", "get"), "parameters": param},
        "CancelJob": {"operationRef": _op("/v1/jobs/{job_id}/cancel", "post"), "parameters": param},
    }


def _track_links(sha256: str) -> dict[str, Any]:
    """The operations on one track, its SHA-256 found at ``sha256``: above all, rendering it."""
    return {
        "SubmitTrack": {
            "operationRef": _op("/v1/jobs", "post"),
            "requestBody": {"tracks": [sha256]},
            # The body is the whole request, as OpenAPI defines a link's requestBody (Schemathesis
            # would otherwise merge it into a generated body, whose options the API may refuse).
            "x-schemathesis": {"merge_body": False},
        },
        "GetTrack": {"operationRef": _op("/v1/tracks/{sha256}", "get"), "parameters": {"sha256": sha256}},
    }


LINKS: dict[tuple[str, str, str], dict[str, Any]] = {
    ("/v1/tracks", "post", "201"): _track_links("$response.body#/sha256"),
    ("/v1/tracks/uploads/{upload_id}/complete", "post", "201"): _track_links("$response.body#/sha256"),
    ("/v1/tracks", "get", "200"): _track_links("$response.body#/items/0/sha256"),
    ("/v1/tracks/uploads", "post", "201"): {
        "CompleteUpload": {
            "operationRef": _op("/v1/tracks/uploads/{upload_id}/complete", "post"),
            "parameters": {"upload_id": "$response.body#/upload_id"},
        }
    },
    ("/v1/jobs", "post", "202"): {
        **_job_links("$response.body#/jobs/0/id"),
        "GetBatch": {
            "operationRef": _op("/v1/batches/{batch_id}", "get"),
            "parameters": {"batch_id": "$response.body#/batch/id"},
        },
    },
    ("/v1/jobs", "get", "200"): _job_links("$response.body#/items/0/id"),
    ("/v1/jobs/{job_id}", "get", "200"): _job_links("$response.body#/id"),
    ("/v1/batches/{batch_id}", "get", "200"): _job_links("$response.body#/job_ids/0"),
}
"""(path, method, status) of an answer -> its links by name."""


def install_links(app: FastAPI) -> None:
    """Make ``app``'s OpenAPI document carry :data:`LINKS`.

    Raises
    ------
    KeyError
        When building the document, for a link from an answer the document does not have (a
        route renamed without its links).
    """
    build = app.openapi

    def with_links() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = build()
        for (path, method, status), links in LINKS.items():
            document["paths"][path][method]["responses"][status]["links"] = links
        return document

    app.openapi = with_links  # type: ignore[method-assign]
