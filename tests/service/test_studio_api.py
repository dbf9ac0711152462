"""The routes the Studio page needs, with real servers: who a key is, options, timeline, audio, CORS."""

from __future__ import annotations

import httpx
import pytest

from tests.service.helpers import SONGS, Album, ServiceStack, ensure_studio_built

pytestmark = pytest.mark.service


def _job(album: Album, song: str) -> dict:
    sha = album.tracks[song]["sha256"]
    return next(j for j in album.jobs.values() if j["track_sha256"] == sha)


def test_whoami_names_the_key_its_team_and_what_its_scopes_allow(stack: ServiceStack) -> None:
    with stack.as_("content") as content, stack.as_("fitness") as fitness:
        me = content.get("/v1/me").json()
        reader = fitness.get("/v1/me").json()
    assert (me["team"], me["scopes"], me["name"]) == ("acme", ["content"], "test content")
    assert me["can"]["upload"] and me["can"]["publish"] and me["can"]["browse_routines"]
    assert not me["can"]["manage_keys"]
    assert reader["scopes"] == ["fitness"]
    assert reader["can"]["browse_routines"]
    assert not any(reader["can"][a] for a in ("upload", "submit", "watch_jobs", "publish", "manage_keys"))
    assert "secret" not in str(me).lower()
    with stack.client("chk_0000000000000000_" + "x" * 43) as wrong:
        refused = wrong.get("/v1/me")
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "invalid_key"


def test_options_list_every_job_option_with_its_choices_and_default(stack: ServiceStack) -> None:
    fields = {f["name"]: f for f in httpx.get(f"{stack.api_url}/v1/options").json()["fields"]}
    assert {"fps", "formats", "style", "seed", "rig", "in_place"} <= set(fields)
    assert fields["formats"]["multiple"] and "glb" in fields["formats"]["choices"]
    assert fields["formats"]["default"] == ["bvh"]
    assert fields["fps"]["choices"] == [24, 25, 30, 50, 60] and fields["fps"]["default"] == 30
    assert fields["style"]["choices"][0] == "auto"
    assert fields["seed"]["type"] == "integer" and fields["seed"]["minimum"] == 0
    assert fields["in_place"]["type"] == "boolean"
    assert "mp4" in fields["formats"]["choices"]
    assert fields["units"]["nullable"] and fields["units"]["choices"] == ["m", "cm"]
    assert fields["synth"]["choices"] and fields["synth"]["default"] in fields["synth"]["choices"]
    assert fields["energy"]["default"] in fields["energy"]["choices"]
    length = fields["video_length_s"]
    assert (length["type"], length["default"], length["nullable"]) == ("number", 30.0, True)


def test_timeline_has_the_beats_and_bars_of_the_job_summary(stack: ServiceStack, album: Album) -> None:
    job = _job(album, "freezingpoint")  # vibe_ace is deleted by test_flow
    with stack.as_("content") as content, stack.as_("other") as other:
        marks = content.get(f"/v1/jobs/{job['id']}/timeline").json()
        files = content.get(f"/v1/jobs/{job['id']}/artifacts").json()["artifacts"]
        links = {a["kind"]: a["url"] for a in files}
        assert other.get(f"/v1/jobs/{job['id']}/timeline").status_code == 404
    summary = httpx.get(links["json"], timeout=30).json()
    assert marks["beat_times"] == summary["beat_times"] and len(marks["beat_times"]) > 50
    assert marks["bar_times"] == summary["downbeat_times"]
    assert marks["duration_s"] == pytest.approx(summary["duration_s"])
    plan = summary["plan"]["segments"]  # the blend synthesizer dances a plan of phrases
    assert [(p["start_s"], p["end_s"]) for p in marks["phrases"]] == [
        (seg["song_beats_s"][0], seg["song_beats_s"][-1]) for seg in plan
    ]
    assert len(plan) > 3 and all(p["label"] for p in marks["phrases"])


def test_audio_streams_whole_and_by_range_to_the_owner_only(stack: ServiceStack, album: Album) -> None:
    job = _job(album, "hungarian")
    song = SONGS["hungarian"].read_bytes()
    url = f"/v1/jobs/{job['id']}/audio"
    with stack.as_("content") as content:
        whole = content.get(url)
        assert whole.status_code == 200 and whole.content == song
        assert whole.headers["accept-ranges"] == "bytes" and whole.headers["content-type"] == "audio/ogg"
        part = content.get(url, headers={"Range": "bytes=1000-1999"})
        assert part.status_code == 206 and part.content == song[1000:2000]
        assert part.headers["content-range"] == f"bytes 1000-1999/{len(song)}"
        tail = content.get(url, headers={"Range": "bytes=-500"})
        assert tail.status_code == 206 and tail.content == song[-500:]
        open_end = content.get(url, headers={"Range": f"bytes={len(song) - 10}-"})
        assert open_end.content == song[-10:]
        outside = content.get(url, headers={"Range": f"bytes={len(song)}-"})
        assert outside.status_code == 416 and outside.headers["content-range"] == f"bytes */{len(song)}"
    with stack.as_("other") as other, stack.as_("fitness") as fitness, stack.client() as anonymous:
        assert other.get(url).status_code == 404
        assert fitness.get(url).status_code == 403
        assert anonymous.get(url).status_code == 401


def test_an_audio_ticket_admits_one_jobs_song_without_the_key_in_the_url(
    stack: ServiceStack, album: Album
) -> None:
    job, another = _job(album, "hungarian"), _job(album, "freezingpoint")
    with stack.as_("content") as content:
        ticket = content.post(f"/v1/jobs/{job['id']}/audio-ticket").json()
        assert stack.tokens["content"] not in ticket["url"]
    with stack.client() as anonymous:
        got = anonymous.get(ticket["url"], headers={"Range": "bytes=0-99"})
        assert got.status_code == 206 and got.content == SONGS["hungarian"].read_bytes()[:100]
        token = ticket["url"].split("ticket=")[1]
        elsewhere = anonymous.get(f"/v1/jobs/{another['id']}/audio", params={"ticket": token})
        assert elsewhere.status_code == 401
        forged = anonymous.get(f"/v1/jobs/{job['id']}/audio", params={"ticket": "x" * 32})
        assert forged.status_code == 401 and forged.json()["error"]["code"] == "invalid_ticket"
    with stack.as_("fitness") as fitness, stack.as_("other") as other:
        assert fitness.post(f"/v1/jobs/{job['id']}/audio-ticket").status_code == 403
        assert other.post(f"/v1/jobs/{job['id']}/audio-ticket").status_code == 404


def test_storage_admits_browser_requests_from_the_studio_origin_only(stack: ServiceStack) -> None:
    s3 = stack.env["CHOREO_S3_ENDPOINT_URL"]
    preflight = {"Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "content-type"}
    ours = httpx.options(f"{s3}/choreo/uploads/x", headers=preflight | {"Origin": stack.api_url})
    assert ours.status_code == 200
    assert ours.headers["access-control-allow-origin"] == stack.api_url
    assert "PUT" in ours.headers["access-control-allow-methods"]
    theirs = httpx.options(
        f"{s3}/choreo/uploads/x", headers=preflight | {"Origin": "http://elsewhere.example"}
    )
    assert "access-control-allow-origin" not in theirs.headers


def test_the_studio_page_is_served_with_three_js_from_our_own_files(stack: ServiceStack) -> None:
    ensure_studio_built()
    page = httpx.get(f"{stack.api_url}/studio/")
    assert page.status_code == 200 and "Choreo Studio" in page.text
    assert "https://" not in page.text and "http://" not in page.text  # nothing from a CDN
    three = httpx.get(f"{stack.api_url}/studio/vendor/three/build/three.module.js")
    assert (
        three.status_code == 200
        and "REVISION" in httpx.get(f"{stack.api_url}/studio/vendor/three/build/three.core.js").text
    )
    assert httpx.get(f"{stack.api_url}/studio", follow_redirects=False).headers["location"] == "/studio/"
