"""The whole flow with real servers: upload, album, progress, downloads, routines, keys."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import numpy as np
import pytest
from matplotlib.image import imread

from choreo.motion.bvh_reader import read_bvh
from choreo.service.callbacks import verify
from tests.service.helpers import SONGS, Album, ServiceStack, metric_samples, upload, wait_for_batch

pytestmark = pytest.mark.service


def _job_for(album: Album, song: str) -> dict:
    sha = album.tracks[song]["sha256"]
    return next(j for j in album.jobs.values() if j["track_sha256"] == sha)


def test_tracks_are_named_by_the_sha256_of_their_bytes(stack: ServiceStack, album: Album) -> None:
    for song, track in album.tracks.items():
        assert track["sha256"] == hashlib.sha256(SONGS[song].read_bytes()).hexdigest()
        assert stack.ctx.storage.size_bytes(f"tracks/{track['sha256']}.ogg") == SONGS[song].stat().st_size
    with stack.as_("content") as client:
        again = upload(client, SONGS["hungarian"], filename="renamed.ogg")
        assert again.status_code == 201
        assert again.json()["sha256"] == album.tracks["hungarian"]["sha256"]
        listed = client.get("/v1/tracks").json()["items"]
    assert {t["sha256"] for t in album.tracks.values()} <= {t["sha256"] for t in listed}
    assert len(listed) == len({t["sha256"] for t in listed}), "the same bytes were listed twice"


def test_album_jobs_all_finish_with_monotonic_progress(album: Album) -> None:
    assert len(album.submit["jobs"]) == 3
    assert len({j["batch_id"] for j in album.submit["jobs"]}) == 1
    assert album.submit["batch"]["id"] == album.submit["jobs"][0]["batch_id"]
    for job in album.jobs.values():
        assert job["state"] == "done", (job["error_code"], job["error_message"])
        assert job["progress"] == 1.0
        assert job["error_code"] is None
        assert set(job["artifacts"]) >= {"bvh", "json", "png"}
        assert job["summary"]["tempo_bpm"] > 0
        assert job["summary"]["mean_joint_speed_m_per_s"] > 0
    batch_progress = [p["progress"] for p in album.progress]
    assert batch_progress == sorted(batch_progress), "batch progress went backwards"
    assert len(set(batch_progress)) >= 3, f"no progress seen between start and end: {batch_progress}"
    assert album.progress[-1]["counts"]["done"] == 3
    assert album.progress[-1]["progress"] == 1.0


def test_every_artifact_downloads_through_its_presigned_url_and_parses(
    stack: ServiceStack, album: Album, tmp_path: Path
) -> None:
    assimp = shutil.which("assimp")
    with stack.as_("content") as client:
        for job in album.jobs.values():
            answer = client.get(f"/v1/jobs/{job['id']}/artifacts")
            assert answer.status_code == 200, answer.text
            body = answer.json()
            assert body["expires_at"] > time.time() + 60
            kinds = {a["kind"]: a for a in body["artifacts"]}
            assert set(kinds) == set(job["artifacts"])
            files = {}
            for kind, link in kinds.items():
                got = httpx.get(link["url"], timeout=60)
                assert got.status_code == 200, (kind, got.text[:200])
                files[kind] = tmp_path / f"{job['id']}-{link['filename']}"
                files[kind].write_bytes(got.content)
            summary = json.loads(files["json"].read_text())
            assert summary["frames"] == job["summary"]["frames"]
            assert summary["song_sha256"] == job["track_sha256"]
            bvh = read_bvh(files["bvh"])
            assert bvh.n_frames == summary["frames"]
            assert np.isfinite(bvh.frames).all()
            if assimp:
                info = subprocess.run([assimp, "info", str(files["bvh"])], capture_output=True, text=True)
                assert info.returncode == 0, info.stderr
            picture = imread(files["png"])
            assert picture.ndim == 3 and picture.shape[0] > 50


def test_a_tampered_presigned_url_is_refused(stack: ServiceStack, album: Album) -> None:
    job = next(iter(album.jobs.values()))
    with stack.as_("content") as client:
        link = client.get(f"/v1/jobs/{job['id']}/artifacts").json()["artifacts"][0]
    tampered = link["url"].replace("X-Amz-Signature=", "X-Amz-Signature=00")
    assert httpx.get(tampered, timeout=30).status_code == 403


def test_routine_is_published_found_by_filter_and_downloaded_by_a_fitness_key(
    stack: ServiceStack, album: Album
) -> None:
    job = _job_for(album, "hungarian")
    with stack.as_("content") as content:
        answer = content.post(
            "/v1/routines", json={"job_id": job["id"], "title": "Brahms HIIT", "tags": ["Cardio", "strings"]}
        )
        assert answer.status_code == 201, answer.text
        routine = answer.json()
        again = content.post("/v1/routines", json={"job_id": job["id"], "title": "twice"})
        assert again.status_code == 409
        assert again.json()["error"]["code"] == "already_published"
    assert routine["tags"] == ["cardio", "strings"]
    assert routine["tempo_bpm"] == pytest.approx(job["summary"]["tempo_bpm"], abs=1e-3)
    assert routine["duration_s"] == pytest.approx(45.84, abs=0.1)
    assert routine["intensity"] == pytest.approx(job["summary"]["mean_joint_speed_m_per_s"], abs=1e-3)
    assert routine["intensity_level"] in ("light", "moderate", "vigorous")
    assert routine["kind"] == "dance" and routine["cue_sheet"] == [] and routine["met"] > 1.3

    tempo = routine["tempo_bpm"]
    with stack.as_("fitness") as fitness:
        hit = fitness.get(
            "/v1/routines",
            params={
                "tag": "cardio",
                "tempo_min_bpm": tempo - 1,
                "tempo_max_bpm": tempo + 1,
                "duration_max_s": 60,
                "intensity": routine["intensity_level"],
            },
        )
        assert hit.status_code == 200, hit.text
        assert [r["id"] for r in hit.json()["items"]] == [routine["id"]]
        miss = fitness.get("/v1/routines", params={"tag": "cardio", "tempo_min_bpm": tempo + 1})
        assert miss.json()["items"] == []
        assert fitness.get("/v1/routines", params={"tag": "yoga"}).json()["items"] == []
        one = fitness.get(f"/v1/routines/{routine['id']}")
        assert one.status_code == 200
        downloads = {d["kind"]: d["url"] for d in one.json()["downloads"]}
        assert httpx.get(downloads["bvh"], timeout=60).content.startswith(b"HIERARCHY")
        # A fitness key reads routines and nothing else.
        assert fitness.post("/v1/jobs", json={"tracks": [job["track_sha256"]]}).status_code == 403
        assert fitness.get(f"/v1/jobs/{job['id']}").status_code == 403
        assert fitness.post("/v1/routines", json={"job_id": job["id"], "title": "x"}).status_code == 403
    with stack.as_("other") as other:
        assert other.get(f"/v1/routines/{routine['id']}").status_code == 404
        assert other.get("/v1/routines").json()["items"] == []
        assert other.get(f"/v1/jobs/{job['id']}").status_code == 404
    with stack.client() as anonymous:
        refused = anonymous.get("/v1/routines")
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == "Bearer"
    with stack.client("chk_0123456789abcdef_not-the-right-secret-at-all") as wrong:
        assert wrong.get("/v1/routines").status_code == 401


def test_routines_page_with_a_cursor_and_unpublish(stack: ServiceStack, album: Album) -> None:
    with stack.as_("content") as content:
        created = []
        for song in ("vibe_ace", "freezingpoint"):
            answer = content.post(
                "/v1/routines", json={"job_id": _job_for(album, song)["id"], "title": song, "tags": ["paged"]}
            )
            assert answer.status_code == 201, answer.text
            created.append(answer.json()["id"])
        seen, cursor = [], None
        while True:
            params = {"tag": "paged", "limit": 1} | ({"cursor": cursor} if cursor else {})
            page = content.get("/v1/routines", params=params).json()
            seen += [r["id"] for r in page["items"]]
            cursor = page["next_cursor"]
            if not cursor:
                break
        assert seen == created[::-1]
        assert content.delete(f"/v1/routines/{created[0]}").status_code == 204
        assert content.get(f"/v1/routines/{created[0]}").status_code == 404
        assert [r["id"] for r in content.get("/v1/routines", params={"tag": "paged"}).json()["items"]] == [
            created[1]
        ]


def test_jobs_are_listed_by_state_with_a_cursor(stack: ServiceStack, album: Album) -> None:
    with stack.as_("content") as client:
        seen, cursor = [], None
        for _ in range(10):
            params = {"state": "done", "limit": 2} | ({"cursor": cursor} if cursor else {})
            page = client.get("/v1/jobs", params=params)
            assert page.status_code == 200, page.text
            seen += [j["id"] for j in page.json()["items"]]
            cursor = page.json()["next_cursor"]
            if not cursor:
                break
        assert set(album.jobs) <= set(seen)
        assert len(seen) == len(set(seen))
        failed = client.get("/v1/jobs", params={"state": "failed"}).json()["items"]
        assert all(j["state"] == "failed" for j in failed)
        assert not set(album.jobs) & {j["id"] for j in failed}
        assert client.get("/v1/jobs", params={"state": "bogus"}).status_code == 422


class _Receiver(BaseHTTPRequestHandler):
    """Checks each callback against team acme's secret and, to show it cannot forge, globex's."""

    received: list[tuple[dict, bool, bool]] = []
    secrets: dict[str, str] = {}

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        stamp, signature = int(self.headers["X-Choreo-Timestamp"]), self.headers["X-Choreo-Signature"]
        good = verify(self.secrets["acme"], stamp, body, signature)
        forged = verify(self.secrets["globex"], stamp, body, signature)
        type(self).received.append((json.loads(body), good, forged))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_dedup_force_cancel_and_signed_callbacks(stack: ServiceStack, album: Album) -> None:
    _Receiver.secrets = stack.callback_secrets
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    callback_url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    sha = album.tracks["hungarian"]["sha256"]
    original = _job_for(album, "hungarian")
    try:
        with stack.as_("content") as client:
            same = client.post("/v1/jobs", json={"tracks": [sha], "options": {"formats": ["bvh"]}}).json()
            assert same["jobs"][0]["id"] == original["id"]
            assert same["jobs"][0]["deduplicated"] is True
            assert same["batch"]["state"] == "finished"

            forced = client.post(
                "/v1/jobs",
                json={"tracks": [sha], "force": True, "priority": 0, "callback_url": callback_url},
            ).json()
            job_id = forced["jobs"][0]["id"]
            assert job_id != original["id"] and forced["jobs"][0]["deduplicated"] is False
            cancelled = client.post(f"/v1/jobs/{job_id}/cancel")
            assert cancelled.status_code == 200, cancelled.text
            assert cancelled.json()["state"] == "cancelled"
            assert client.post(f"/v1/jobs/{job_id}/cancel").status_code == 409
            wait_for_batch(client, forced["batch"]["id"], timeout_s=30)
            time.sleep(8)  # long enough for a stage already taken by a worker to end
            job = client.get(f"/v1/jobs/{job_id}").json()
            assert job["state"] == "cancelled" and job["artifacts"] == []

        with stack.as_("other") as other:
            assert other.get(f"/v1/tracks/{sha}").status_code == 404
            assert other.post("/v1/jobs", json={"tracks": [sha]}).status_code == 404
            assert upload(other, SONGS["hungarian"]).status_code == 201
            theirs = other.post("/v1/jobs", json={"tracks": [sha], "options": {"formats": ["bvh"]}}).json()
            assert theirs["jobs"][0]["deduplicated"] is False
            assert theirs["jobs"][0]["id"] != original["id"]
            assert other.post(f"/v1/jobs/{theirs['jobs'][0]['id']}/cancel").status_code == 200

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(_Receiver.received) < 2:
            time.sleep(0.2)
    finally:
        server.shutdown()
    events = {payload["event"]: (payload, good) for payload, good, _ in _Receiver.received}
    assert set(events) == {"job.finished", "batch.finished"}
    assert all(good for _, good in events.values()), "a callback's signature did not verify"
    assert not any(forged for *_, forged in _Receiver.received), "another team's secret verified"
    assert events["job.finished"][0]["state"] == "cancelled"
    assert events["batch.finished"][0]["counts"]["cancelled"] == 1


def test_health_readiness_and_metrics(stack: ServiceStack, album: Album) -> None:
    with stack.client() as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        ready = client.get("/readyz")
        assert ready.status_code == 200
        assert ready.json()["checks"] == {"redis": "ok", "storage": "ok"}
        text = client.get("/metrics").text
        assert client.get("/docs").status_code == 200
        spec = client.get("/openapi.json").json()
        assert "multipart/form-data" in spec["paths"]["/v1/tracks"]["post"]["requestBody"]["content"]
    samples = metric_samples(text)
    assert samples['choreo_queue_depth{queue="cpu"}'] >= 0
    assert samples['choreo_queue_depth{queue="gpu"}'] >= 0
    assert samples['choreo_job_duration_seconds_count{state="done"}'] >= 1  # the album's jobs finished
    assert samples['choreo_http_requests_total{method="POST",route="/v1/jobs",status="202"}'] >= 1


def test_cli_submits_waits_and_downloads_through_the_client(
    stack: ServiceStack, album: Album, tmp_path: Path
) -> None:
    env = stack.env | {"CHOREO_API_URL": stack.api_url, "CHOREO_API_KEY": stack.tokens["content"]}

    def choreo(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "choreo.cli.main", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    run = choreo("submit", str(SONGS["hungarian"]), "--wait", "-o", str(tmp_path))
    assert run.returncode == 0, run.stderr
    assert "already rendered" in run.stdout
    assert {p.suffix for p in tmp_path.iterdir()} == {".bvh", ".json", ".png"}
    listed = choreo("jobs", "--state", "done")
    assert listed.returncode == 0 and _job_for(album, "hungarian")["id"] in listed.stdout
    refused = subprocess.run(
        [sys.executable, "-m", "choreo.cli.main", "jobs"],
        env=env | {"CHOREO_API_KEY": stack.tokens["fitness"]},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "403" in refused.stderr


def test_deleting_a_job_removes_its_files(stack: ServiceStack, album: Album) -> None:
    job = _job_for(album, "vibe_ace")
    assert list(stack.ctx.storage.list_keys(f"jobs/{job['id']}/"))
    with stack.as_("content") as client:
        assert client.delete(f"/v1/jobs/{job['id']}").status_code == 204
        assert client.get(f"/v1/jobs/{job['id']}").status_code == 404
        assert client.get(f"/v1/jobs/{job['id']}/artifacts").status_code == 404
    assert list(stack.ctx.storage.list_keys(f"jobs/{job['id']}/")) == []
