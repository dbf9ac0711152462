"""Albums through the API, with real servers: a named upload, a song rendered again (a take of it),
the album published as a whole and downloaded as one zip streamed from storage."""

from __future__ import annotations

import io
import json
import subprocess
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from matplotlib.image import imread

from choreo.contracts.summary import DanceSummary
from choreo.motion.bvh_reader import read_bvh
from tests.service.helpers import ServiceStack, cut_songs, upload, wait_for_batch

pytestmark = pytest.mark.service

ALBUM_NAME = "Summer Set: Vol/2 – Ünïcode"


@dataclass
class Named:
    """A named album of two cut songs, rendered, and one of its songs rendered again as salsa."""

    batch: dict
    songs: list[dict]
    take: dict


def _wait_for_job(client: httpx.Client, job_id: str, *, timeout_s: float = 240) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = client.get(f"/v1/jobs/{job_id}").json()
        if job["state"] in ("done", "failed", "cancelled"):
            return job
        time.sleep(0.5)
    raise AssertionError(f"job {job_id} did not end within {timeout_s} s")


@pytest.fixture(scope="module")
def named(stack: ServiceStack, tmp_path_factory: pytest.TempPathFactory) -> Named:
    cuts = cut_songs(tmp_path_factory.mktemp("album"), 2, seconds=9)
    with stack.as_("content") as client:
        shas = []
        for cut in cuts:
            answer = upload(client, cut)
            assert answer.status_code == 201, answer.text
            shas.append(answer.json()["sha256"])
        options = {"formats": ["bvh", "glb", "mp4"], "fps": 30, "seed": 3, "video_length_s": 4}
        submitted = client.post("/v1/jobs", json={"tracks": shas, "options": options, "name": ALBUM_NAME})
        assert submitted.status_code == 202, submitted.text
        batch = submitted.json()["batch"]
        wait_for_batch(client, batch["id"])
        songs = [client.get(f"/v1/jobs/{job_id}").json() for job_id in batch["job_ids"]]
        again = client.post(
            f"/v1/jobs/{songs[0]['id']}/rerender", json={"options": songs[0]["options"] | {"style": "salsa"}}
        )
        assert again.status_code == 202, again.text
        take = _wait_for_job(client, again.json()["id"])
    return Named(batch=batch, songs=songs, take=take)


def test_an_upload_is_named_and_the_team_lists_its_albums_newest_first(
    stack: ServiceStack, named: Named
) -> None:
    assert named.batch["name"] == ALBUM_NAME
    with stack.as_("content") as content, stack.as_("other") as other:
        # The same songs and options again: a second album of the same (deduplicated) jobs, unnamed.
        song = named.songs[1]
        repeat = content.post("/v1/jobs", json={"tracks": [song["track_sha256"]], "options": song["options"]})
        assert repeat.json()["batch"]["name"] == "" and repeat.json()["jobs"][0]["id"] == song["id"]
        albums = content.get("/v1/batches").json()["items"]
        page = content.get("/v1/batches", params={"limit": 1}).json()
        assert content.get(f"/v1/batches/{named.batch['id']}").json()["name"] == ALBUM_NAME
        assert all(b["id"] != named.batch["id"] for b in other.get("/v1/batches").json()["items"])
    assert [b["created_at"] for b in albums] == sorted((b["created_at"] for b in albums), reverse=True)
    mine = next(b for b in albums if b["id"] == named.batch["id"])
    assert mine["state"] == "finished" and mine["job_ids"] == named.batch["job_ids"]
    assert albums[0]["id"] == repeat.json()["batch"]["id"] and albums[0]["job_ids"] == [song["id"]]
    assert len(page["items"]) == 1 and page["next_cursor"]
    with stack.as_("content") as content:
        rest = content.get("/v1/batches", params={"cursor": page["next_cursor"]}).json()["items"]
    assert page["items"][0]["id"] not in {b["id"] for b in rest}


def test_each_song_says_the_style_and_tempo_that_auto_chose(named: Named) -> None:
    for song in named.songs:
        assert song["state"] == "done" and song["options"]["style"] == "auto"
        assert song["summary"]["style"] in ("salsa", "modern", "breakdance")
        assert song["summary"]["tempo_bpm"] > 40


def test_a_song_rendered_again_is_a_take_of_the_albums_song(stack: ServiceStack, named: Named) -> None:
    first, take = named.songs[0], named.take
    assert take["state"] == "done" and take["rerender_of"] == first["id"] and take["batch_id"] is None
    assert take["track_sha256"] == first["track_sha256"] and take["options"]["style"] == "salsa"
    with stack.as_("content") as content, stack.as_("other") as other:
        # A take of a take is a take of the first: the album's song stays the one to group under.
        again = content.post(
            f"/v1/jobs/{take['id']}/rerender", json={"options": take["options"] | {"seed": 11}}
        ).json()
        assert again["rerender_of"] == first["id"]
        # The same options as an existing take give that take back.
        same = content.post(f"/v1/jobs/{first['id']}/rerender", json={"options": first["options"]}).json()
        assert same["id"] == first["id"] and same["deduplicated"]
        assert other.post(f"/v1/jobs/{first['id']}/rerender", json={"options": {}}).status_code == 404
        _wait_for_job(content, again["id"])
        content.delete(f"/v1/jobs/{again['id']}")


def test_the_album_downloads_as_one_zip_whose_files_parse(
    stack: ServiceStack, named: Named, tmp_path: Path
) -> None:
    with stack.as_("content") as content:
        ticket = content.post(f"/v1/batches/{named.batch['id']}/archive-ticket").json()
    assert stack.tokens["content"] not in ticket["url"]
    with httpx.stream("GET", f"{stack.api_url}{ticket['url']}", timeout=120) as answer:
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "application/zip"
        assert "content-length" not in answer.headers, "the archive is streamed, not built first"
        assert "attachment" in answer.headers["content-disposition"]
        body = b"".join(answer.iter_bytes())
    archive = zipfile.ZipFile(io.BytesIO(body))
    assert archive.testzip() is None
    names = archive.namelist()
    folder = "Summer Set_ Vol_2 – Ünïcode"
    assert all(n.startswith(f"{folder}/") for n in names), names
    manifest = json.loads(archive.read(f"{folder}/album.json"))
    assert manifest["album"] == ALBUM_NAME and len(manifest["songs"]) == 2
    first_takes = manifest["songs"][0]["takes"]
    assert [t["job_id"] for t in first_takes] == [named.songs[0]["id"], named.take["id"]]
    assert first_takes[1]["style"] == "salsa" and first_takes[0]["style_asked"] == "auto"
    kinds = {"bvh", "glb", "mp4", "json", "png"}
    second_files = manifest["songs"][1]["takes"][0]["files"]
    for song, files in zip(named.songs, (first_takes[0]["files"], second_files), strict=True):
        assert {Path(f).suffix[1:] for f in files} == kinds, files
        assert all(f.startswith(("01 ", "02 ")) and "/take" not in f for f in files)
        assert Path(files[0]).parent.name.endswith(Path(song["track_name"]).stem)
    assert any("/take 2 (salsa, seed 3)/" in n for n in names)
    for name in names:
        data = archive.read(name)
        out = tmp_path / Path(name).name
        out.write_bytes(data)
        if name.endswith(".bvh"):
            assert read_bvh(out).n_frames > 100
        elif name.endswith(".json") and not name.endswith("album.json"):
            assert DanceSummary.model_validate_json(data).frames > 100
        elif name.endswith(".glb"):
            assert data[:4] == b"glTF" and int.from_bytes(data[8:12], "little") == len(data)
        elif name.endswith(".png"):
            assert imread(io.BytesIO(data), format="png").ndim == 3
        elif name.endswith(".mp4"):
            probe = subprocess.run(
                ["ffprobe", "-v", "error", "-show_streams", "-of", "json", str(out)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            assert {s["codec_type"] for s in json.loads(probe.stdout)["streams"]} == {"video", "audio"}
    # With the key as a header too; a forged ticket, another team and a fitness key are refused.
    with stack.as_("content") as content:
        assert content.get(f"/v1/batches/{named.batch['id']}/archive").status_code == 200
    with stack.client() as anonymous, stack.as_("other") as other, stack.as_("fitness") as fitness:
        forged = anonymous.get(f"/v1/batches/{named.batch['id']}/archive", params={"ticket": "x" * 32})
        assert forged.status_code == 401 and forged.json()["error"]["code"] == "invalid_ticket"
        assert anonymous.get(f"/v1/batches/{named.batch['id']}/archive").status_code == 401
        assert other.post(f"/v1/batches/{named.batch['id']}/archive-ticket").status_code == 404
        assert fitness.post(f"/v1/batches/{named.batch['id']}/archive-ticket").status_code == 403


def test_the_album_is_published_as_a_whole_once(stack: ServiceStack, named: Named) -> None:
    url = f"/v1/batches/{named.batch['id']}/publish"
    with stack.as_("content") as content:
        answer = content.post(url, json={"tags": ["Album-Test"]})
        assert answer.status_code == 201, answer.text
        published = answer.json()
        again = content.post(url, json={"tags": []}).json()
        jobs = {j["id"]: j for j in content.get("/v1/jobs", params={"limit": 200}).json()["items"]}
    assert published["skipped"] == [] and len(published["published"]) == 2
    first, second = published["published"]
    # Each song once, as its newest finished take: the first song's salsa take, the second's only one.
    assert first["job_id"] == named.take["id"] and second["job_id"] == named.songs[1]["id"]
    assert first["title"] == Path(named.songs[0]["track_name"]).stem
    assert set(first["tags"]) == {"album-test", ALBUM_NAME.lower()}
    assert [s["reason"] for s in again["published"]] == [] and len(again["skipped"]) == 2
    assert all(s["reason"].startswith("It is already published as") for s in again["skipped"])
    assert jobs[named.take["id"]]["published"] == {"routine_id": first["id"], "title": first["title"]}
    assert jobs[named.songs[0]["id"]]["published"] is None
    with stack.as_("fitness") as fitness:
        found = fitness.get("/v1/routines", params={"tag": ALBUM_NAME.lower()}).json()["items"]
    assert {r["id"] for r in found} == {first["id"], second["id"]}
