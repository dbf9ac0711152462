"""Stage priority on a real queue: an album's first songs finish while the rest wait.

A stack of its own (its own ``redis-server``; one CPU worker that runs one task
at a time) renders an album of six 6-second cuts with the blend synthesizer, so
both of a job's stages, ``prepare`` and ``finish``, go through the CPU queue.
Served first in first out, all six prepares would run before the first finish
(they were all queued before it); with a job's later stages ahead of every first
stage, the first job's finish runs as soon as its prepare has ended. The job
records' own timestamps (``started_at`` when prepare begins, ``finished_at``
when finish ends, written by the one worker in turn) say which happened.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from choreo.service.keys import create_key
from tests.harness.localstack import LocalStack
from tests.service.helpers import SONGS, cut_songs, redis_server_of_its_own, upload, wait_for_batch

pytestmark = pytest.mark.service

ALBUM = 6


@dataclass
class OneAtATime:
    local: LocalStack
    token: str
    songs: list[Path]

    def client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.local.api_url, headers={"Authorization": f"Bearer {self.token}"}, timeout=60
        )


@pytest.fixture(scope="module")
def one_at_a_time(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OneAtATime]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    if not all(path.is_file() for path in SONGS.values()):
        pytest.skip("shared music not found")
    root = tmp_path_factory.mktemp("priority")
    songs = cut_songs(root, ALBUM, seconds=6.0)
    with redis_server_of_its_own(root) as redis_url:
        local = LocalStack(
            root / "stack",
            redis_url,
            cpu_workers=1,
            cpu_concurrency=1,
            gpu_concurrency=1,
            env={"CHOREO_ENGINE_THREADS": "1", "OMP_NUM_THREADS": "1"},
        )
        with local:
            token = create_key(local.ctx, team="album", name="priority", scopes=["content"])[1]
            yield OneAtATime(local=local, token=token, songs=songs)


def test_the_first_song_finishes_before_the_album_s_last_song_starts(one_at_a_time: OneAtATime) -> None:
    with one_at_a_time.client() as client:
        shas = []
        for song in one_at_a_time.songs:
            answer = upload(client, song)
            assert answer.status_code == 201, answer.text
            shas.append(answer.json()["sha256"])
        answer = client.post(
            "/v1/jobs", json={"tracks": shas, "options": {"synth": "blend", "formats": ["bvh"]}}
        )
        assert answer.status_code == 202, answer.text
        wait_for_batch(client, answer.json()["batch"]["id"], timeout_s=600)
        jobs = [client.get(f"/v1/jobs/{j['id']}").json() for j in answer.json()["jobs"]]
    assert [j["state"] for j in jobs] == ["done"] * ALBUM, [j.get("error_message") for j in jobs]
    by_start = sorted(jobs, key=lambda j: j["started_at"])
    first, last = by_start[0], by_start[-1]
    timeline = [
        (round(j["started_at"] - first["started_at"], 2), round(j["finished_at"] - first["started_at"], 2))
        for j in by_start
    ]
    assert first["finished_at"] < last["started_at"], (
        f"the first song waited behind every prepare: {timeline}"
    )
    # One worker, one task at a time: the first job's finish comes right after its prepare.
    assert [j for j in jobs if j["started_at"] < first["finished_at"]] == [first], timeline
