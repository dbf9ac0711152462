"""A Python client of the Choreo service.

Reads the API's address and key from ``CHOREO_API_URL`` and ``CHOREO_API_KEY``
unless they are given::

    from choreo.client import ChoreoClient

    with ChoreoClient() as client:
        batch = client.submit_songs(["a.mp3", "b.ogg"], formats=["bvh", "glb"])
        client.wait_batch(batch["batch"]["id"])
        for job in batch["jobs"]:
            client.download(job["id"], "dances/")

Every refusal raises :class:`ApiError` with the HTTP status and the service's
error code and message.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from choreo.errors import ChoreoError, ParameterError

__all__ = ["DEFAULT_API_URL", "ApiError", "ChoreoClient"]

DEFAULT_API_URL = "http://127.0.0.1:8000"
_PRESIGNED_FROM_BYTES = 32 * 1024 * 1024


class ApiError(ChoreoError):
    """The service refused a request: ``status`` is the HTTP status, ``code`` the service's code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}", code=code)
        self.status = status


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class ChoreoClient:
    """Talks to one Choreo service with one API key.

    Parameters
    ----------
    api_url : the service's base URL; default ``$CHOREO_API_URL`` or http://127.0.0.1:8000
    api_key : the key; default ``$CHOREO_API_KEY``
    timeout_s : per-request timeout; for a song's or an artifact's transfer, the longest wait for one
        read or write (a big file may take longer in all, a stalled connection does not hang)
    presigned_from_bytes : songs at least this big go through a presigned upload
    """

    def __init__(
        self,
        api_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout_s: float = 120.0,
        presigned_from_bytes: int = _PRESIGNED_FROM_BYTES,
    ) -> None:
        self.api_url = (api_url or os.environ.get("CHOREO_API_URL") or DEFAULT_API_URL).rstrip("/")
        key = api_key or os.environ.get("CHOREO_API_KEY")
        if not key:
            raise ParameterError("no API key: pass api_key or set CHOREO_API_KEY")
        self.presigned_from_bytes = presigned_from_bytes
        self._http = httpx.Client(
            base_url=self.api_url, headers={"Authorization": f"Bearer {key}"}, timeout=timeout_s
        )

    def __enter__(self) -> ChoreoClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _request(self, method: str, url: str, **kwargs: Any) -> Any:
        try:
            answer = self._http.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            raise ApiError(0, "unreachable", f"{method} {self.api_url}{url} failed: {exc}") from exc
        if answer.status_code >= 400:
            try:
                error = answer.json()["error"]
                code, message = error["code"], error["message"]
            except (ValueError, KeyError, TypeError):
                code, message = "http_error", answer.text[:500]
            raise ApiError(answer.status_code, code, message)
        return answer.json() if answer.content else None

    # -- tracks -------------------------------------------------------------------------------------------
    def upload_track(self, path: str | os.PathLike[str]) -> dict[str, Any]:
        """Upload a song (multipart, or presigned for big files); returns the track record."""
        path = Path(path)
        if not path.is_file():
            raise ParameterError(f"song {path} does not exist")
        size = path.stat().st_size
        if size >= self.presigned_from_bytes:
            return self._presigned_upload(path, size)
        with path.open("rb") as fh:
            return self._request(
                "POST", "/v1/tracks", files={"file": (path.name, fh, "application/octet-stream")}
            )

    def _presigned_upload(self, path: Path, size: int) -> dict[str, Any]:
        ticket = self._request(
            "POST",
            "/v1/tracks/uploads",
            json={"filename": path.name, "sha256": _file_sha256(path), "size_bytes": size},
        )
        with path.open("rb") as fh:
            put = httpx.put(ticket["url"], content=fh, headers=ticket["headers"], timeout=self._http.timeout)
        if put.status_code >= 300:
            raise ApiError(
                put.status_code, "upload_failed", f"storage refused the upload of {path}: {put.text[:300]}"
            )
        return self._request("POST", ticket["complete_url"])

    def delete_track(self, sha256: str) -> None:
        self._request("DELETE", f"/v1/tracks/{sha256}")

    # -- jobs ---------------------------------------------------------------------------------------------
    def submit(
        self,
        tracks: Sequence[str],
        *,
        priority: int = 5,
        callback_url: str | None = None,
        force: bool = False,
        **options: Any,
    ) -> dict[str, Any]:
        """Render tracks (by SHA-256) as one batch; ``options``: fps, formats, style, seed, rig, in_place."""
        body: dict[str, Any] = {
            "tracks": list(tracks),
            "options": options,
            "priority": priority,
            "force": force,
        }
        if callback_url:
            body["callback_url"] = callback_url
        return self._request("POST", "/v1/jobs", json=body)

    def submit_songs(self, paths: Sequence[str | os.PathLike[str]], **kwargs: Any) -> dict[str, Any]:
        """Upload songs and render them as one batch (an album)."""
        shas = [self.upload_track(p)["sha256"] for p in paths]
        return self.submit(shas, **kwargs)

    def job(self, job_id: str) -> dict[str, Any]:
        return self._request("GET", f"/v1/jobs/{job_id}")

    def jobs(self, *, state: str | None = None, limit: int = 50, cursor: str | None = None) -> dict[str, Any]:
        params = {
            k: v for k, v in {"state": state, "limit": limit, "cursor": cursor}.items() if v is not None
        }
        return self._request("GET", "/v1/jobs", params=params)

    def iter_jobs(self, *, state: str | None = None, page_size: int = 100) -> Iterator[dict[str, Any]]:
        """Every job of the team (in one state), following the cursor."""
        cursor = None
        while True:
            page = self.jobs(state=state, limit=page_size, cursor=cursor)
            yield from page["items"]
            cursor = page["next_cursor"]
            if not cursor:
                return

    def batch(self, batch_id: str) -> dict[str, Any]:
        return self._request("GET", f"/v1/batches/{batch_id}")

    def wait_batch(
        self,
        batch_id: str,
        *,
        timeout_s: float = 3600.0,
        poll_s: float = 1.0,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """Poll until every job of the batch has ended; returns the final batch status.

        Raises
        ------
        ApiError
            With code ``timeout`` when the batch is still running after ``timeout_s``.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            status = self.batch(batch_id)
            if on_progress:
                on_progress(status)
            if status["state"] == "finished":
                return status
            if time.monotonic() > deadline:
                raise ApiError(0, "timeout", f"batch {batch_id} still running after {timeout_s} s")
            time.sleep(poll_s)

    def cancel(self, job_id: str) -> dict[str, Any]:
        return self._request("POST", f"/v1/jobs/{job_id}/cancel")

    def delete_job(self, job_id: str) -> None:
        self._request("DELETE", f"/v1/jobs/{job_id}")

    def artifacts(self, job_id: str) -> dict[str, Any]:
        return self._request("GET", f"/v1/jobs/{job_id}/artifacts")

    def download(self, job_id: str, out_dir: str | os.PathLike[str]) -> list[Path]:
        """Download every file of a done job into ``out_dir``; returns the paths written."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for link in self.artifacts(job_id)["artifacts"]:
            target = out / Path(link["filename"]).name
            with httpx.stream("GET", link["url"], timeout=self._http.timeout) as answer:
                if answer.status_code != 200:
                    raise ApiError(
                        answer.status_code, "download_failed", f"{link['filename']}: {answer.status_code}"
                    )
                with target.open("wb") as fh:
                    for chunk in answer.iter_bytes():
                        fh.write(chunk)
            written.append(target)
        return written

    # -- routines -----------------------------------------------------------------------------------------
    def publish(
        self, job_id: str, *, title: str, tags: Sequence[str] = (), style: str | None = None
    ) -> dict[str, Any]:
        body = {"job_id": job_id, "title": title, "tags": list(tags)} | ({"style": style} if style else {})
        return self._request("POST", "/v1/routines", json=body)

    def routines(self, **filters: Any) -> dict[str, Any]:
        """Find routines by tag, style, intensity (light, moderate, vigorous), kind (dance, workout), impact,
        profile, tempo_min/max_bpm and duration_min/max_s."""
        return self._request(
            "GET", "/v1/routines", params={k: v for k, v in filters.items() if v is not None}
        )

    def routine(self, routine_id: str) -> dict[str, Any]:
        return self._request("GET", f"/v1/routines/{routine_id}")

    def unpublish(self, routine_id: str) -> None:
        self._request("DELETE", f"/v1/routines/{routine_id}")

    # -- keys (admin) -------------------------------------------------------------------------------------
    def create_key(
        self, *, team: str, name: str, scopes: Sequence[str], rate_limit_per_minute: int | None = None
    ) -> dict[str, Any]:
        body = {
            "team": team,
            "name": name,
            "scopes": list(scopes),
            "rate_limit_per_minute": rate_limit_per_minute,
        }
        return self._request("POST", "/v1/keys", json=body)

    def keys(self, *, team: str | None = None) -> dict[str, Any]:
        return self._request("GET", "/v1/keys", params={"team": team} if team else {})

    def revoke_key(self, key_id: str) -> dict[str, Any]:
        return self._request("DELETE", f"/v1/keys/{key_id}")
