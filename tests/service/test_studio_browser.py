"""Choreo Studio in a real browser: Debian's chromium driven by Playwright, WebGL by SwiftShader.

One content-team session (the module fixture :func:`session`) signs in, uploads a
real song through the page's file picker (presigned PUT straight to SeaweedFS,
so the bucket's CORS rules are exercised), waits for the job to finish, opens
the 3D player and plays it; the tests then check what it saw. Other tests sign
in with a read-only fitness key, a revoked key and a server that does not answer.
Set ``CHOREO_STUDIO_SCREENSHOT=docs/studio-player.png`` to keep the player's picture.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
import pytest
from matplotlib.image import imread
from playwright.sync_api import expect, sync_playwright

from choreo.service.keys import create_key, revoke_key
from tests.service.helpers import SONGS, ServiceStack, ensure_studio_built

pytestmark = pytest.mark.service

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--use-gl=angle",
    "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader",
    "--ignore-gpu-blocklist",
    "--autoplay-policy=no-user-gesture-required",
]
SONG = SONGS["hungarian"]  # 46 s: the quickest real song to render


def _pixels(png: bytes) -> np.ndarray:
    return imread(io.BytesIO(png), format="png")[..., :3]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.is_file():
        pytest.fail("Debian's chromium is missing: `make system-deps` installs it (apt-get install chromium)")

    ensure_studio_built()
    with sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def _page(browser, problems: list[str] | None = None):  # noqa: ANN001, ANN202 - Playwright objects
    page = browser.new_page(viewport={"width": 1200, "height": 1300})
    if problems is not None:
        page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    return page


def _sign_in(page, stack: ServiceStack, token: str) -> None:  # noqa: ANN001
    page.goto(f"{stack.api_url}/studio/")
    page.fill("#key-input", token)
    page.click("#signin-form button[type=submit]")


@dataclass
class Session:
    """What the content team's session saw."""

    job: dict
    problems: list[str]
    puts: list[tuple[str, str | None, int]]
    """Each PUT the page sent: URL without its query, its If-None-Match header, the answer's status."""
    still: np.ndarray
    playing: list[np.ndarray]
    clocks: list[dict]
    looped: list[float]
    loop_span: tuple[float, float]
    views: dict[str, np.ndarray] = field(default_factory=dict)
    downloads: list[str] = field(default_factory=list)
    half_rate: float = 0.0
    published: str = ""
    rerendered: list[dict] = field(default_factory=list)


_CLOCKS = """() => new Promise((done) => requestAnimationFrame(() => done({
    audio: window.choreoStudio.audioTime, dance: window.choreoStudio.danceTime,
    paused: document.getElementById('audio').paused })))"""


@pytest.fixture(scope="module")
def session(stack: ServiceStack, browser) -> Session:  # noqa: ANN001
    problems: list[str] = []
    page = _page(browser, problems)
    sent_puts: list = []
    page.on("requestfinished", lambda r: r.method == "PUT" and sent_puts.append(r))
    _sign_in(page, stack, stack.tokens["content"])
    page.wait_for_selector("#who:not([hidden])")
    page.wait_for_selector("#options-fields input[data-option=formats][value=glb]:checked")
    page.check("#options-fields input[data-option=formats][value=mp4]")  # the video with the song, too
    page.set_input_files("#file-input", str(SONG))
    note = page.wait_for_selector("#upload-list li .msg:text-matches('rendering in batch')", timeout=120_000)
    batch_id = note.text_content().rsplit(" ", 1)[-1]
    puts = [
        (r.url.split("?")[0], r.all_headers().get("if-none-match"), r.response().status) for r in sent_puts
    ]
    with stack.as_("content") as client:
        job = next(j for j in client.get("/v1/jobs").json()["items"] if j["batch_id"] == batch_id)
    play = f"#job-{job['id']} button[data-job]:not([disabled])"
    page.wait_for_selector(play, timeout=300_000)
    page.click(play)
    page.wait_for_function(
        "window.choreoStudio.danceTime !== null && document.getElementById('audio').readyState >= 2"
        " && document.getElementById('player-message').textContent === ''",
        timeout=120_000,
    )
    stage = page.locator("#stage")
    still = _pixels(stage.screenshot())
    page.click("#play")
    page.wait_for_function("window.choreoStudio.audioTime > 1.0", timeout=30_000)
    playing = [_pixels(stage.screenshot())]
    clocks = [page.evaluate(_CLOCKS)]
    page.wait_for_timeout(1000)
    playing.append(_pixels(stage.screenshot()))
    clocks.append(page.evaluate(_CLOCKS))
    if shot := os.environ.get("CHOREO_STUDIO_SCREENSHOT"):
        page.locator("#player-section").screenshot(path=shot)

    page.click("[data-rate='0.5']")
    half_rate = page.evaluate("document.getElementById('audio').playbackRate")
    clocks.append(page.evaluate(_CLOCKS))
    page.click("[data-rate='1']")
    page.click("#loop-bar")
    page.wait_for_timeout(300)
    first = page.evaluate(_CLOCKS)["audio"]
    looped = []
    for _ in range(12):  # about three seconds: longer than any bar of this song
        page.wait_for_timeout(250)
        looped.append(page.evaluate(_CLOCKS)["audio"])
    span = page.evaluate("[window.choreoStudio.loop?.start, window.choreoStudio.loop?.end]")
    page.click("#loop-bar")
    page.click("#play")  # pause: the views are compared on one pose
    views = {}
    for view in ("front", "side", "top"):
        page.click(f"[data-view={view}]")
        page.wait_for_timeout(200)
        views[view] = _pixels(stage.screenshot())
    downloads = page.eval_on_selector_all("#downloads a", "links => links.map(a => a.href)")

    row = f"#job-{job['id']}"
    page.click(f"{row} button:text-is('Publish')")
    page.fill(f"{row} form[data-kind=publish] input >> nth=0", "Studio routine")
    page.fill(f"{row} form[data-kind=publish] input >> nth=1", "studio-ui, strings")
    page.click(f"{row} form[data-kind=publish] button[type=submit]")
    published = page.wait_for_selector(
        f"{row} form[data-kind=publish] span:text-matches('Published as')"
    ).text_content()
    page.click(f"{row} button:text-is('Render again')")
    page.fill(f"{row} form[data-kind=rerender] input[type=number]", "7")
    page.select_option(f"{row} form[data-kind=rerender] select", "salsa")
    page.click(f"{row} form[data-kind=rerender] button[type=submit]")
    page.wait_for_selector("#jobs-list td:has-text('salsa · seed 7')", timeout=60_000)
    with stack.as_("content") as client:
        # Other service tests share the team and submit this song with seed 7 too: only jobs made
        # after this session's job, from its song, count as its re-render.
        again = [
            j
            for j in client.get("/v1/jobs").json()["items"]
            if j["options"]["seed"] == 7
            and j["track_sha256"] == job["track_sha256"]
            and j["created_at"] > job["created_at"]
        ]
    page.close()
    return Session(
        job=job,
        problems=problems,
        puts=puts,
        still=still,
        playing=playing,
        clocks=clocks,
        looped=[first, *looped],
        loop_span=tuple(span),
        views=views,
        downloads=downloads,
        half_rate=half_rate,
        published=published,
        rerendered=again,
    )


def test_the_uploaded_song_is_rendered_as_a_job_with_a_glb(session: Session) -> None:
    assert session.job["track_name"] == SONG.name
    assert "glb" in session.job["options"]["formats"]


def test_the_song_went_straight_to_storage_in_one_conditional_put(
    stack: ServiceStack, session: Session
) -> None:
    [(url, condition, status)] = session.puts
    assert url.startswith(f"{stack.env['CHOREO_S3_ENDPOINT_URL']}/choreo/uploads/up_")
    assert (condition, status) == ("*", 200), "the page must send the ticket's signed If-None-Match"


def test_the_player_canvas_shows_a_lit_mannequin_not_a_blank(session: Session) -> None:
    image = session.still
    background = np.median(image.reshape(-1, 3), axis=0)
    differs = np.abs(image - background).sum(axis=-1) > 0.15
    assert 0.01 < differs.mean() < 0.6, f"{differs.mean():.3f} of the canvas differs from its background"
    assert len(np.unique((image * 255).astype(np.uint8).reshape(-1, 3), axis=0)) > 200, "flat shading"


def test_two_screenshots_a_second_apart_differ_while_playing(session: Session) -> None:
    before, after = session.playing
    assert not session.clocks[1]["paused"]
    changed = (np.abs(before - after).sum(axis=-1) > 0.05).mean()
    assert changed > 0.002, f"only {changed:.4f} of the pixels changed in a second of dance"


def test_the_audio_advances_and_the_dance_clock_is_the_audio_clock(session: Session) -> None:
    first, second = session.clocks[:2]
    assert second["audio"] - first["audio"] > 0.5, session.clocks
    for clock in session.clocks:
        assert clock["dance"] == pytest.approx(clock["audio"], abs=0.1), clock
    assert session.half_rate == 0.5


def test_loop_a_bar_keeps_the_song_inside_that_bar(session: Session) -> None:
    start, end = session.loop_span
    assert 0.5 < end - start < 4.0, session.loop_span
    assert all(start - 0.05 <= t <= end + 0.1 for t in session.looped), (session.loop_span, session.looped)
    assert min(session.looped[1:]) < max(session.looped[1:]) - 0.3, "the song did not move"


def test_front_side_and_top_views_show_different_pictures(session: Session) -> None:
    front, side, top = (session.views[v] for v in ("front", "side", "top"))
    for a, b in ((front, side), (front, top), (side, top)):
        assert (np.abs(a - b).sum(axis=-1) > 0.1).mean() > 0.01


def test_every_artifact_has_a_download_link_that_works(
    stack: ServiceStack, session: Session, tmp_path: Path
) -> None:
    with stack.as_("content") as client:
        kinds = client.get(f"/v1/jobs/{session.job['id']}").json()["artifacts"]
    assert len(session.downloads) == len(kinds) and set(kinds) >= {"bvh", "glb", "mp4", "json", "png"}
    for url in session.downloads:
        got = httpx.get(url, timeout=30)
        assert got.status_code == 200, url
        if ".mp4" in url.split("?")[0]:
            video = tmp_path / "dance.mp4"
            video.write_bytes(got.content)
            probe = subprocess.run(
                ["ffprobe", "-v", "error", "-show_streams", "-of", "json", str(video)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            streams = {s["codec_type"]: s for s in json.loads(probe.stdout)["streams"]}
            assert streams["video"]["height"] == 720 and streams["audio"]["codec_name"] == "aac"


def test_render_again_submits_the_same_song_with_the_new_seed_and_style(session: Session) -> None:
    assert len(session.rerendered) == 1
    job = session.rerendered[0]
    assert job["track_sha256"] == session.job["track_sha256"] and job["id"] != session.job["id"]
    assert job["options"]["style"] == "salsa"
    assert job["options"]["formats"] == session.job["options"]["formats"]


def test_no_console_errors_in_the_whole_session(session: Session) -> None:
    assert session.problems == []


def test_a_fitness_key_browses_routines_and_cannot_upload(
    stack: ServiceStack,
    browser,
    session: Session,  # noqa: ANN001
) -> None:
    assert "Published as" in session.published  # by the content team's session, through the page
    problems: list[str] = []
    page = _page(browser, problems)
    _sign_in(page, stack, stack.tokens["fitness"])
    page.wait_for_selector("#who:not([hidden])")
    assert page.is_hidden("#upload") and page.is_hidden("#jobs") and page.is_visible("#routines")
    assert page.is_hidden("#drop") and page.is_hidden("#file-input")
    page.fill("#routine-filters input[name=tag]", "studio-ui")
    page.click("#routine-filters button[type=submit]")
    # The list shows every routine before the filter's answer replaces it: wait for that answer.
    expect(page.locator("#routine-list .routine")).to_have_count(1)
    expect(page.locator("#routine-list .routine")).to_contain_text("Studio routine")
    page.click("#routine-list .routine button")
    links = page.wait_for_selector("#routine-list .downloads a")
    assert links.get_attribute("href").startswith("http")
    page.fill("#routine-filters input[name=tempo_min_bpm]", "400")
    page.click("#routine-filters button[type=submit]")
    page.wait_for_selector("#routine-list:has-text('No routine matches')")
    # The API refuses the key whatever a page does.
    with stack.as_("fitness") as fitness, SONG.open("rb") as fh:
        refused = fitness.post("/v1/tracks", files={"file": (SONG.name, fh, "audio/ogg")})
    assert refused.status_code == 403
    page.close()
    assert problems == []


def test_a_revoked_key_gets_a_message_and_the_sign_in_form(stack: ServiceStack, browser) -> None:  # noqa: ANN001
    record, token = create_key(stack.ctx, team="acme", name="soon revoked", scopes=["content"])
    revoke_key(stack.ctx, record.id)
    page = _page(browser)
    _sign_in(page, stack, token)
    message = page.wait_for_selector("#signin-error:text-matches('refused')")
    assert "revoked" in message.text_content()
    assert page.is_visible("#signin") and page.is_hidden("#upload")
    page.close()


def test_a_rejected_file_says_why_and_a_server_that_is_down_gets_a_banner(
    stack: ServiceStack, browser, tmp_path: Path
) -> None:  # noqa: ANN001
    notes = tmp_path / "notes.txt"
    notes.write_text("not a song")
    fake = tmp_path / "fake.ogg"
    fake.write_bytes(b"this is text, not Ogg" * 100)
    page = _page(browser)
    _sign_in(page, stack, stack.tokens["content"])
    page.wait_for_selector("#who:not([hidden])")
    page.set_input_files("#file-input", [str(notes), str(fake)])
    page.wait_for_selector("#upload-list li.error:has-text('notes.txt') .msg:text-matches('not a song')")
    refused = page.wait_for_selector("#upload-list li.error:has-text('fake.ogg') .msg", timeout=60_000)
    assert "Rejected" in refused.text_content()
    page.route("**/v1/**", lambda route: route.abort("connectionrefused"))
    page.wait_for_selector("#banner:not([hidden]):text-matches('does not answer')", timeout=60_000)
    assert page.is_visible("#jobs")  # the page stays, with its last known state
    page.close()
