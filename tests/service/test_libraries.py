"""A team's own library through the service: uploaded, built by a CPU worker, danced, kept to the team.

Team acme uploads FBX and GLB exports of real CMU clips (mixamo and smpl rigs)
in two styles, beside files that must be refused (a text file named ``.fbx``,
a T-pose take, a file never uploaded); a CPU worker builds the library from
the rest, each refusal with its reason; acme dances a song in it with both
synthesizers, and the dances carry the library's hash and credits. Team
globex cannot see the library, list it, or dance with it; deleting it leaves
acme's finished dances as they were.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from choreo.mocap.dataset import retargeted_dance
from choreo.service.rebuild import rebuild_index
from exporters.fbx import write_fbx
from exporters.gltf import write_glb
from tests.service.helpers import ServiceStack, cut_songs, upload, wait_for_batch

pytestmark = pytest.mark.service

MOCAP = Path(__file__).resolve().parents[3] / "shared" / "data" / "mocap"
CREDIT = "Dana Choreographer for acme"


def _wait_for_library(client: httpx.Client, library_id: str, timeout_s: float = 300) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        library = client.get(f"/v1/libraries/{library_id}").json()
        if library["state"] in ("ready", "failed"):
            return library
        time.sleep(0.5)
    raise AssertionError(f"library {library_id} was not built within {timeout_s} s: {library}")


def _motion_files(folder: Path) -> dict[str, tuple[Path, str]]:
    """name -> (file, style): CMU clips exported by our own exporters, and files that must be refused."""
    files: dict[str, tuple[Path, str]] = {}
    for name, rig in (("05_02", "mixamo"), ("05_04", "smpl"), ("05_12", "mixamo")):
        motion, _ = retargeted_dance(MOCAP / "cmu_05_modern" / f"{name}.bvh")
        path = folder / f"contemporary/{name}.fbx"
        path.parent.mkdir(exist_ok=True)
        files[f"contemporary/{name}.fbx"] = (write_fbx(motion, path, rig=rig), "contemporary")
    motion, _ = retargeted_dance(MOCAP / "cmu_85_breakdance" / "85_14_keijiro_neo30fps.bvh")
    (folder / "power").mkdir()
    files["power/85_14.glb"] = (write_glb(motion, folder / "power" / "85_14.glb", rig="mixamo"), "power")
    still = motion.replace(
        rotations=np.zeros_like(motion.rotations),
        root_translation=np.tile([0.0, 0.94, 0.0], (motion.n_frames, 1)),
    )
    files["power/t_pose.fbx"] = (write_fbx(still, folder / "power" / "t_pose.fbx", rig="mixamo"), "power")
    notes = folder / "power" / "notes.fbx"
    notes.write_text("not a motion file")
    files["power/notes.fbx"] = (notes, "power")
    files["power/never_sent.bvh"] = (MOCAP / "cmu_05_modern" / "05_03.bvh", "power")
    return files


@pytest.fixture(scope="module")
def built(stack: ServiceStack, tmp_path_factory: pytest.TempPathFactory) -> dict:
    files = _motion_files(tmp_path_factory.mktemp("motion"))
    declared = []
    for name, (path, style) in files.items():
        data = path.read_bytes()
        sha256 = hashlib.sha256(data).hexdigest()
        declared.append(
            {"filename": name, "sha256": sha256, "size_bytes": len(data), "style": style,
             "credit": CREDIT, "licence": "CC-BY-4.0"}
        )  # fmt: skip
    with stack.as_("content") as client:
        created = client.post("/v1/libraries", json={"name": "acme moves", "files": declared})
        assert created.status_code == 201, created.text
        body = created.json()
        for ticket in body["uploads"]:
            if ticket["filename"] == "power/never_sent.bvh":
                continue
            put = httpx.put(
                ticket["url"], content=files[ticket["filename"]][0].read_bytes(), headers=ticket["headers"]
            )
            assert put.status_code == 200, put.text
        started = client.post(body["build_url"])
        assert started.status_code == 202, started.text
        library = _wait_for_library(client, body["library"]["id"])
    return library


def test_a_library_is_built_from_the_usable_files_and_says_why_the_others_were_refused(
    built: dict, stack: ServiceStack
) -> None:
    assert built["state"] == "ready", built
    files = {f["filename"]: f for f in built["files"]}
    assert {n for n, f in files.items() if f["status"] == "used"} == {
        "contemporary/05_02.fbx", "contemporary/05_04.fbx", "contemporary/05_12.fbx", "power/85_14.glb",
    }  # fmt: skip
    assert files["power/never_sent.bvh"]["reason"] == "not uploaded"
    assert "Assimp could not read it as fbx" in files["power/notes.fbx"]["reason"]
    assert "nothing moves: a T-pose" in files["power/t_pose.fbx"]["reason"]
    assert set(built["styles"]) == {"contemporary", "power"}
    for style in built["styles"].values():
        assert style["minutes"] > 0 and style["phrases"] > 0 and style["tempo_bpm"]
    assert built["credits"] == [f"{CREDIT} (licence: CC-BY-4.0)"]
    assert len(built["sha256"]) == 64
    with stack.as_("content") as client:
        sheet = client.get(f"/v1/libraries/{built['id']}/sheets/power")
        assert sheet.status_code == 200 and sheet.content.startswith(b"\x89PNG")
        listed = client.get("/v1/libraries").json()["items"]
        assert built["id"] in [item["id"] for item in listed]
        options = client.get("/v1/options").json()
        assert {"id": built["id"], "name": "acme moves", "sha256": built["sha256"],
                "styles": ["contemporary", "power"]} in options["libraries"]  # fmt: skip
    with stack.client() as anonymous:
        assert anonymous.get("/v1/options").json()["libraries"] == []
    # storage is the record: a lost index entry comes back from it
    stack.ctx.redis.delete(stack.ctx.key("library", built["id"]))
    assert rebuild_index(stack.ctx)["libraries"] >= 1
    with stack.as_("content") as client:
        assert client.get(f"/v1/libraries/{built['id']}").json()["sha256"] == built["sha256"]


def test_another_team_can_neither_see_nor_dance_with_the_library(built: dict, stack: ServiceStack) -> None:
    with stack.as_("other") as globex:
        assert globex.get(f"/v1/libraries/{built['id']}").status_code == 404
        assert globex.get(f"/v1/libraries/{built['id']}/sheets/power").status_code == 404
        assert built["id"] not in [item["id"] for item in globex.get("/v1/libraries").json()["items"]]
        assert globex.get("/v1/options").json()["libraries"] == []
        assert globex.delete(f"/v1/libraries/{built['id']}").status_code == 404
        dance = globex.post("/v1/jobs", json={"tracks": ["0" * 64], "options": {"library": built["id"]}})
        assert dance.status_code == 404 and "no library" in dance.text


def test_jobs_dance_in_the_team_library_carry_its_hash_and_credits_and_survive_its_deletion(
    built: dict, stack: ServiceStack, tmp_path: Path
) -> None:
    (song,) = cut_songs(tmp_path, 1, seconds=20.0)
    with stack.as_("content") as client:
        track = upload(client, song).json()["sha256"]
        bad_style = client.post(
            "/v1/jobs", json={"tracks": [track], "options": {"library": built["id"], "style": "salsa"}}
        )
        assert bad_style.status_code == 422 and "has no style 'salsa'" in bad_style.text
        jobs = {}
        for synth in ("blend", "model"):
            options = {
                "library": built["id"],
                "style": "auto" if synth == "blend" else "power",
                "synth": synth,
            }
            submitted = client.post("/v1/jobs", json={"tracks": [track], "options": options})
            assert submitted.status_code == 202, submitted.text
            wait_for_batch(client, submitted.json()["batch"]["id"])
            jobs[synth] = client.get(f"/v1/jobs/{submitted.json()['jobs'][0]['id']}").json()
            assert jobs[synth]["state"] == "done", jobs[synth]
        again = client.post(
            "/v1/jobs", json={"tracks": [track], "options": {"library": built["id"], "style": "auto"}}
        )
        assert (
            again.json()["jobs"][0]["deduplicated"] and again.json()["jobs"][0]["id"] == jobs["blend"]["id"]
        )
        shipped = client.post("/v1/jobs", json={"tracks": [track], "options": {"style": "auto"}})
        assert not shipped.json()["jobs"][0]["deduplicated"]  # another library, another dance
        summaries = {}
        for synth, job in jobs.items():
            links = {
                a["kind"]: a["url"] for a in client.get(f"/v1/jobs/{job['id']}/artifacts").json()["artifacts"]
            }
            summaries[synth] = httpx.get(links["json"]).json()
        for synth, summary in summaries.items():
            assert summary["library_sha256"] == built["sha256"], synth
            assert summary["plan"]["library_sha256"] == built["sha256"], synth
            assert f"{CREDIT} (licence: CC-BY-4.0)" in summary["data_credits"], synth
            assert summary["style"] in ("contemporary", "power"), synth
        assert any(n.startswith("auto chose") for n in summaries["blend"]["plan"]["notes"])
        assert client.delete(f"/v1/libraries/{built['id']}").status_code == 204
        assert client.get(f"/v1/libraries/{built['id']}").status_code == 404
        after = client.get(f"/v1/jobs/{jobs['blend']['id']}/artifacts").json()["artifacts"]
        json_url = next(a["url"] for a in after if a["kind"] == "json")
        assert httpx.get(json_url).json()["library_sha256"] == built["sha256"]
        gone = client.post(
            "/v1/jobs", json={"tracks": [track], "options": {"library": built["id"]}, "force": True}
        )
        assert gone.status_code == 404 and "no library" in gone.text
