"""Choreo Studio in a real browser: Debian's chromium driven by Playwright, WebGL by SwiftShader.

One content-team session (the module fixture :func:`session`) signs in, uploads a named album of
two real songs (46 s and 3:45) through the page's file picker (presigned PUTs straight to
SeaweedFS, so the bucket's CORS rules are exercised), waits for the jobs to finish, opens the
3D player and plays one song, checks that the follow camera keeps the whole figure in the picture
on both songs in every view, zooms the long song's timeline, publishes a song and then the album,
renders a song again, plays the routine, and downloads the album as one archive; the tests then
check what it saw. Other tests: the layout at 1280 and 800 px with a long message in a row, a
folder uploaded with a refused file among its songs, a read-only fitness key, a revoked key and a
server that does not answer. Set ``CHOREO_STUDIO_SCREENSHOTS=docs`` to keep the pictures of
``docs/studio.md`` (``studio-*.png``) in that folder.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
import pytest
from matplotlib.image import imread, imsave
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect, sync_playwright

from choreo.contracts.summary import DanceSummary
from choreo.motion.bvh_reader import read_bvh
from choreo.service.jobs import end_job
from choreo.service.keys import create_key, revoke_key
from choreo.service.records import JobState
from tests.service.helpers import MUSIC, SONGS, ServiceStack, cut_songs, ensure_studio_built, made_job

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
LONG_SONG = MUSIC / "gpl" / "hedgewars__Music__Freeway.ogg"  # 3:45, 400 beats: the dancer ranges over 6 m
ALBUM = "Studio review – vol. 1"
SHOTS = os.environ.get("CHOREO_STUDIO_SCREENSHOTS")
"""A folder to keep the pictures of docs/studio.md in, or None."""


def _pixels(png: bytes) -> np.ndarray:
    return imread(io.BytesIO(png), format="png")[..., :3]


def _shot(locator, name: str) -> None:  # noqa: ANN001 - a Playwright locator
    """Keep a picture of ``locator`` as docs/studio-<name>.png (when asked to), after the page settles."""
    if not SHOTS:
        return
    for attempt in range(3):  # the albums are drawn again when the jobs change; try again after that
        locator.page.wait_for_timeout(1000)
        try:
            locator.screenshot(path=str(Path(SHOTS) / f"studio-{name}.png"))
            return
        except PlaywrightError:
            if attempt == 2:
                raise


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.is_file():
        pytest.fail("Debian's chromium is missing: `make system-deps` installs it (apt-get install chromium)")
    if not LONG_SONG.is_file():
        pytest.skip(f"shared music not found: {LONG_SONG}")
    ensure_studio_built()
    with sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def _page(browser, problems: list[str] | None = None, *, width: int = 1200, height: int = 1300):  # noqa: ANN001, ANN202
    page = browser.new_page(viewport={"width": width, "height": height})
    if problems is not None:
        page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    return page


def _sign_in(page, stack: ServiceStack, token: str) -> None:  # noqa: ANN001
    page.goto(f"{stack.api_url}/studio/")
    page.fill("#key-input", token)
    page.click("#signin-form button[type=submit]")


@dataclass
class Framing:
    """Where the figure was drawn (normalized device coordinates, inside is -1..1) at sampled times."""

    boxes: dict[tuple[str, float], dict[str, float]]
    follow: list[list[float]]
    """The followed point (x, y, z metres) at each sampled time of the front view."""


@dataclass
class Session:
    """What the content team's session saw."""

    job: dict
    long_job: dict
    batch_id: str
    problems: list[str]
    puts: list[tuple[str, str | None, int]]
    """Each PUT the page sent: URL without its query, its If-None-Match header, the answer's status."""
    still: np.ndarray
    playing: list[np.ndarray]
    clocks: list[dict]
    looped: list[float]
    loop_span: tuple[float, float]
    framing: dict[str, Framing] = field(default_factory=dict)
    views: dict[str, np.ndarray] = field(default_factory=dict)
    downloads: list[str] = field(default_factory=list)
    half_rate: float = 0.0
    timeline: dict[str, object] = field(default_factory=dict)
    style_choices: dict[str, list[str]] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)
    published: dict[str, object] = field(default_factory=dict)
    rerendered: list[dict] = field(default_factory=list)
    take_row: dict[str, object] = field(default_factory=dict)
    routine_play: dict[str, object] = field(default_factory=dict)
    archive: Path | None = None
    album_published: str = ""


_CLOCKS = """() => new Promise((done) => requestAnimationFrame(() => done({
    audio: window.choreoStudio.audioTime, dance: window.choreoStudio.danceTime,
    paused: document.getElementById('audio').paused })))"""

_READY = (
    "window.choreoStudio.playingJob === '{job}' && window.choreoStudio.danceTime !== null"
    " && document.getElementById('audio').readyState >= 2"
    " && document.getElementById('player-message').textContent === ''"
)


def _play(page, job: dict) -> None:  # noqa: ANN001
    page.click(f"#job-{job['id']} button[data-job]:not([disabled])")
    page.wait_for_function(_READY.format(job=job["id"]), timeout=120_000)


def _framing(page, duration_s: float) -> Framing:  # noqa: ANN001
    """The figure's box in each view at ten times spread over the song (the audio paused)."""
    times = [round(duration_s * k / 10 + 0.7, 2) for k in range(10)]
    boxes, follow = {}, []
    for view in ("front", "side", "top"):
        page.click(f"[data-view={view}]")
        for t in times:
            page.evaluate(f"document.getElementById('audio').currentTime = {t}")
            page.wait_for_function(f"Math.abs(window.choreoStudio.danceTime - {t}) < 0.01", timeout=30_000)
            boxes[(view, t)] = page.evaluate("window.choreoStudio.figureBox()")
            if view == "front":
                follow.append(page.evaluate("window.choreoStudio.followPoint"))
    page.click("[data-view=front]")
    return Framing(boxes=boxes, follow=follow)


def _timeline(page) -> dict[str, object]:  # noqa: ANN001
    """What the long song's timeline shows: by default, zoomed, panned, whole; and a looped bar's width."""
    seen: dict[str, object] = {}
    page.evaluate("document.getElementById('audio').currentTime = 100")
    page.wait_for_function("Math.abs(window.choreoStudio.danceTime - 100) < 0.01")
    seen["default"] = page.evaluate("window.choreoStudio.timelineWindow")
    page.click("#loop-bar")
    page.wait_for_timeout(300)
    span = page.evaluate("window.choreoStudio.loop")
    window = page.evaluate("window.choreoStudio.timelineWindow")
    seen["loop_px"] = (span["end"] - span["start"]) / (window["end"] - window["start"]) * window["width"]
    seen["loop_tint"] = _loop_tint(page, span, window)
    _shot(page.locator("#timeline-box"), "timeline")
    page.click("#loop-bar")
    page.click("#zoom-in")
    seen["zoomed_in"] = page.evaluate("window.choreoStudio.timelineWindow")
    page.click("#zoom-out")
    page.click("#zoom-out")
    seen["zoomed_out"] = page.evaluate("window.choreoStudio.timelineWindow")
    box = page.locator("#timeline").bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.25, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -300)
    seen["wheel"] = page.evaluate("window.choreoStudio.timelineWindow")
    page.keyboard.down("Shift")
    page.mouse.wheel(0, 400)
    page.keyboard.up("Shift")
    seen["panned"] = page.evaluate("window.choreoStudio.timelineWindow")
    overview = page.locator("#overview").bounding_box()
    page.mouse.click(overview["x"] + overview["width"] * 0.1, overview["y"] + overview["height"] / 2)
    seen["overview"] = page.evaluate("window.choreoStudio.timelineWindow")
    page.click("#zoom-all")
    seen["whole"] = page.evaluate("window.choreoStudio.timelineWindow")
    seen["text"] = page.text_content("#zoom-text")
    return seen


def _loop_tint(page, span: dict, window: dict) -> float:  # noqa: ANN001
    """How much bluer the timeline is inside the looped bar than outside it (0..1 of the blue channel)."""
    image = _pixels(page.locator("#timeline").screenshot())
    width = image.shape[1]
    x0 = int((span["start"] - window["start"]) / (window["end"] - window["start"]) * width) + 4
    x1 = int((span["end"] - window["start"]) / (window["end"] - window["start"]) * width) - 4
    assert 0 < x0 < x1 < width, f"the looped bar {span} is not inside the window {window}"
    inside = image[:, x0:x1]
    outside = np.concatenate([image[:, : max(x0 - 8, 1)], image[:, x1 + 8 :]], axis=1)
    blueness = lambda part: float((part[..., 2] - part[..., 0]).mean())  # noqa: E731
    return blueness(inside) - blueness(outside)


@pytest.fixture(scope="module")
def session(stack: ServiceStack, browser, tmp_path_factory: pytest.TempPathFactory) -> Session:  # noqa: ANN001
    problems: list[str] = []
    page = _page(browser, problems)
    sent_puts: list = []
    page.on("requestfinished", lambda r: r.method == "PUT" and sent_puts.append(r))
    _sign_in(page, stack, stack.tokens["content"])
    page.wait_for_selector("#who:not([hidden])")
    page.wait_for_selector("#options-fields input[data-option=formats][value=glb]:checked")
    page.check("#options-fields input[data-option=formats][value=mp4]")  # the video with the song, too
    style_choices = {
        "options": page.eval_on_selector_all(
            "#options-fields select[name=style] option", "os => os.map(o => o.value)"
        ),
        "routines": page.eval_on_selector_all(
            "#routine-filters select[name=style] option", "os => os.map(o => o.value)"
        ),
    }
    page.fill("#album-name", ALBUM)
    page.set_input_files("#file-input", [str(SONG), str(LONG_SONG)])
    note = page.wait_for_selector("#upload-list li[data-batch]", timeout=180_000)
    batch_id = note.get_attribute("data-batch")
    puts = [
        (r.url.split("?")[0], r.all_headers().get("if-none-match"), r.response().status) for r in sent_puts
    ]
    with stack.as_("content") as client:
        batch = client.get(f"/v1/batches/{batch_id}").json()
        job, long_job = (client.get(f"/v1/jobs/{job_id}").json() for job_id in batch["job_ids"])
    for each in (job, long_job):
        page.wait_for_selector(f"#job-{each['id']} button[data-job]:not([disabled])", timeout=300_000)
    with stack.as_("content") as client:
        job, long_job = (client.get(f"/v1/jobs/{each['id']}").json() for each in (job, long_job))

    _play(page, job)
    stage = page.locator("#stage")
    still = _pixels(stage.screenshot())
    page.click("#play")
    page.wait_for_function("window.choreoStudio.audioTime > 1.0", timeout=30_000)
    playing = [_pixels(stage.screenshot())]
    clocks = [page.evaluate(_CLOCKS)]
    page.wait_for_timeout(1000)
    playing.append(_pixels(stage.screenshot()))
    clocks.append(page.evaluate(_CLOCKS))
    titles = {
        "player": page.text_content("#player-title"),
        "row": page.text_content(f"#job-{job['id']} .facts"),
    }
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
        page.wait_for_timeout(300)
        views[view] = _pixels(stage.screenshot())
    downloads = page.eval_on_selector_all("#downloads a", "links => links.map(a => a.href)")
    framing = {"short": _framing(page, job["summary"]["duration_s"])}

    _play(page, long_job)
    framing["long"] = _framing(page, long_job["summary"]["duration_s"])
    page.evaluate(
        "document.getElementById('audio').currentTime = 105"
    )  # where the old camera lost the dancer
    page.wait_for_function("Math.abs(window.choreoStudio.danceTime - 105) < 0.01")
    page.wait_for_timeout(300)
    if SHOTS:  # the three views side by side, at half size
        pictures = []
        for view in ("front", "side", "top"):
            page.click(f"[data-view={view}]")
            page.wait_for_timeout(400)
            pictures.append(_pixels(stage.screenshot())[::2, ::2])
        imsave(Path(SHOTS) / "studio-views.png", np.concatenate(pictures, axis=1))
        page.click("[data-view=front]")
        page.wait_for_timeout(400)
    _shot(page.locator("#player-section"), "player")
    timeline = _timeline(page)

    # Publish the first song from its row: the row says so and offers no second Publish.
    row = f"#job-{job['id']}"
    page.click(f"{row} button:text-is('Publish')")
    page.fill(f"{row} form[data-kind=publish] input >> nth=0", "Studio routine")
    page.fill(f"{row} form[data-kind=publish] input >> nth=1", "studio-ui, strings")
    page.click(f"{row} form[data-kind=publish] button[type=submit]")
    page.wait_for_selector(f"{row} .published:text-matches('Published as')")
    page.wait_for_selector("#routine-list .routine:has-text('Studio routine')")  # listed without a search
    published = {
        "note": page.text_content(f"{row} .note"),
        "state": page.text_content(f"{row} .published"),
        "buttons": page.eval_on_selector_all(f"{row} .actions button", "bs => bs.map(b => b.textContent)"),
    }

    # Render the long song again: the take is listed under its song, in the album.
    long_row = f"#job-{long_job['id']}"
    page.click(f"{long_row} button:text-is('Render again')")
    style_choices["rerender"] = page.eval_on_selector_all(
        f"{long_row} form[data-kind=rerender] select option", "os => os.map(o => o.value)"
    )
    page.fill(f"{long_row} form[data-kind=rerender] input[type=number]", "7")
    page.select_option(f"{long_row} form[data-kind=rerender] select", "salsa")
    page.click(f"{long_row} form[data-kind=rerender] button[type=submit]")
    take = page.wait_for_selector(
        f".album[data-batch='{batch_id}'] .take:has(.badge:text-is('take 2')):has-text('seed 7')",
        timeout=60_000,
    )
    take_id = take.get_attribute("id").removeprefix("job-")
    page.wait_for_selector(f"#job-{take_id} button[data-job]:not([disabled])", timeout=300_000)
    take_row = {
        "song_of": page.evaluate(
            f"document.getElementById('job-{take_id}').closest('.song').firstElementChild.id"
        ),
        "note": page.text_content(f"{long_row} > .note"),
    }
    with stack.as_("content") as client:
        # Other service tests share the team and render this song with seed 7 too: only jobs made
        # after this session's job, from its song, count as its re-render.
        again = [
            j
            for j in client.get("/v1/jobs", params={"limit": 200}).json()["items"]
            if j["options"]["seed"] == 7
            and j["track_sha256"] == long_job["track_sha256"]
            and j["created_at"] > long_job["created_at"]
        ]

    # The published routine plays in the 3D player, and its job is marked in the list.
    page.click("#routine-list .routine:has-text('Studio routine') button:text-is('Play')")
    page.wait_for_function(_READY.format(job=job["id"]), timeout=120_000)
    routine_play = {
        "title": page.text_content("#player-title"),
        "marked": page.eval_on_selector_all(".take.playing", "rows => rows.map(r => r.id)"),
        "badge": page.eval_on_selector_all(".playing-badge", "bs => bs.length"),
    }

    # The whole album: one archive, then published (the song published already is left out).
    album = f".album[data-batch='{batch_id}']"
    with page.expect_download(timeout=120_000) as fetched:
        page.click(f"{album} button.download-album")
    archive = tmp_path_factory.mktemp("archive") / "album.zip"
    fetched.value.save_as(archive)
    page.click(f"{album} button.publish-album")
    page.fill(f"{album} form[data-kind=publish-album] input", "studio-album")
    page.click(f"{album} form[data-kind=publish-album] button[type=submit]")
    album_published = page.wait_for_selector(f"{album} > .note:text-matches('Published')").text_content()
    _shot(page.locator(f"{album}"), "album")
    page.close()
    return Session(
        job=job,
        long_job=long_job,
        batch_id=batch_id,
        problems=problems,
        puts=puts,
        still=still,
        playing=playing,
        clocks=clocks,
        looped=[first, *looped],
        loop_span=tuple(span),
        framing=framing,
        views=views,
        downloads=downloads,
        half_rate=half_rate,
        timeline=timeline,
        style_choices=style_choices,
        titles=titles,
        published=published,
        rerendered=again,
        take_row=take_row | {"id": take_id},
        routine_play=routine_play,
        archive=archive,
        album_published=album_published,
    )


def test_the_named_album_is_rendered_as_jobs_with_a_glb(stack: ServiceStack, session: Session) -> None:
    assert session.job["track_name"] == SONG.name and session.long_job["track_name"] == LONG_SONG.name
    assert "glb" in session.job["options"]["formats"]
    with stack.as_("content") as client:
        assert client.get(f"/v1/batches/{session.batch_id}").json()["name"] == ALBUM


def test_each_song_went_straight_to_storage_in_one_conditional_put(
    stack: ServiceStack, session: Session
) -> None:
    assert len(session.puts) == 2
    for url, condition, status in session.puts:
        assert url.startswith(f"{stack.env['CHOREO_S3_ENDPOINT_URL']}/choreo/uploads/up_")
        assert (condition, status) == ("*", 200), "the page must send the ticket's signed If-None-Match"


def test_the_list_and_the_player_say_the_style_and_tempo_auto_chose(session: Session) -> None:
    chosen = session.job["summary"]["style"]
    tempo = f"{round(session.job['summary']['tempo_bpm'])} BPM"
    assert session.job["options"]["style"] == "auto"
    for text in session.titles.values():
        assert f"{chosen} (auto chose it)" in text and tempo in text, session.titles


def test_the_deprecated_style_is_not_offered(session: Session) -> None:
    for where, choices in session.style_choices.items():
        assert "whirl" not in choices and "salsa" in choices, (where, choices)


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
        assert clock["dance"] == pytest.approx(clock["audio"], abs=0.06), clock
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


@pytest.mark.parametrize("song", ["short", "long"])
def test_the_camera_keeps_the_whole_figure_in_the_picture_in_every_view(session: Session, song: str) -> None:
    framing = session.framing[song]
    assert len(framing.boxes) == 30
    for (view, t), box in framing.boxes.items():
        inside = box["left"] > -0.97 and box["right"] < 0.97 and box["bottom"] > -0.97 and box["top"] < 0.97
        assert inside, f"{song} song, {view} view at {t} s: the figure reaches {box}"
        assert box["right"] - box["left"] > 0.05 and box["top"] - box["bottom"] > 0.15, "too small to see"
    if song == "long":  # the check means something: this dancer travels far, and the camera went along
        follow = np.array(framing.follow)
        assert np.ptp(follow[:, 0]) + np.ptp(follow[:, 2]) > 1.5, follow


def test_the_long_songs_timeline_zooms_and_pans_with_the_bar_readable(session: Session) -> None:
    seen = session.timeline
    default = seen["default"]
    span = default["end"] - default["start"]
    assert default["start"] <= 100 <= default["end"] and 10 < span < 40, default  # about eight bars
    assert seen["loop_px"] > 80, f"a looped bar is {seen['loop_px']:.0f} px wide"
    assert seen["loop_tint"] > 0.08, "the looped bar is not clearly tinted"
    spans = {k: seen[k]["end"] - seen[k]["start"] for k in ("zoomed_in", "zoomed_out", "wheel")}
    assert spans["zoomed_in"] == pytest.approx(span / 2, rel=0.01)
    assert spans["zoomed_out"] == pytest.approx(span * 2, rel=0.01)
    assert spans["wheel"] < spans["zoomed_out"] * 0.8  # the wheel zooms in about the pointer
    assert seen["panned"]["start"] > seen["wheel"]["start"] + 1  # shift and the wheel pan later
    assert seen["overview"]["start"] < 30  # a click on the whole song's strip moves the window there
    whole = seen["whole"]
    assert whole["start"] == 0 and whole["end"] == pytest.approx(
        session.long_job["summary"]["duration_s"], abs=0.5
    )
    assert "whole song" in seen["text"]


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
            streams = _streams(video)
            assert streams["video"]["height"] == 720 and streams["audio"]["codec_name"] == "aac"


def _streams(video: Path) -> dict[str, dict]:
    probe = subprocess.run(
        ["ffprobe", "-v", "error", "-show_streams", "-of", "json", str(video)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return {s["codec_type"]: s for s in json.loads(probe.stdout)["streams"]}


def test_a_published_job_says_so_and_offers_no_second_publish(session: Session) -> None:
    published = session.published
    assert "Published as “Studio routine”" in published["note"] and published["note"].endswith(".")
    assert published["state"] == "Published as “Studio routine”"
    assert "Publish" not in published["buttons"] and "Play" in published["buttons"]


def test_render_again_lists_the_take_under_its_song(session: Session) -> None:
    assert len(session.rerendered) == 1
    job = session.rerendered[0]
    assert job["id"] == session.take_row["id"] and job["rerender_of"] == session.long_job["id"]
    assert job["track_sha256"] == session.long_job["track_sha256"]
    assert job["options"]["style"] == "salsa"
    assert job["options"]["formats"] == session.long_job["options"]["formats"]
    assert session.take_row["song_of"] == f"job-{session.long_job['id']}"
    assert "Rendering again as salsa, seed 7" in session.take_row["note"]


def test_a_routine_plays_in_the_player_and_its_job_is_marked_in_the_list(session: Session) -> None:
    played = session.routine_play
    assert played["title"].startswith("routine “Studio routine”: ")
    assert played["marked"] == [f"job-{session.job['id']}"] and played["badge"] == 1


def test_the_album_downloads_as_one_archive_whose_files_parse(session: Session, tmp_path: Path) -> None:
    archive = zipfile.ZipFile(session.archive)
    names = archive.namelist()
    manifest = json.loads(archive.read(next(n for n in names if n.endswith("/album.json"))))
    assert manifest["album"] == ALBUM and [s["song"] for s in manifest["songs"]] == [
        SONG.name,
        LONG_SONG.name,
    ]
    assert [len(s["takes"]) for s in manifest["songs"]] == [1, 2]
    kinds = {}
    for name in names:
        data = archive.read(name)
        out = tmp_path / Path(name).name
        out.write_bytes(data)
        kind = Path(name).suffix[1:]
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind == "bvh":
            assert read_bvh(out).frames.shape[0] > 1000
        elif kind == "json" and not name.endswith("/album.json"):
            assert DanceSummary.model_validate_json(data).style
        elif kind == "glb":
            assert data[:4] == b"glTF" and int.from_bytes(data[8:12], "little") == len(data)
        elif kind == "png":
            assert imread(io.BytesIO(data), format="png").ndim == 3
        elif kind == "mp4":
            assert _streams(out)["video"]["height"] == 720
    assert kinds == {"json": 4, "bvh": 3, "glb": 3, "mp4": 3, "png": 3}  # three takes and the manifest


def test_the_album_is_published_as_a_whole(stack: ServiceStack, session: Session) -> None:
    note = session.album_published
    assert note.startswith("Published 1 song as routines: ") and "Left out:" in note, note
    assert "It is already published as “Studio routine”" in note
    with stack.as_("fitness") as fitness:
        found = fitness.get("/v1/routines", params={"tag": "studio-album"}).json()["items"]
    # The long song's newest finished take: the salsa one rendered again.
    assert [r["job_id"] for r in found] == [session.take_row["id"]]
    assert ALBUM.lower() in found[0]["tags"]


def test_no_console_errors_in_the_whole_session(session: Session) -> None:
    assert session.problems == []


@pytest.mark.parametrize("width", [1280, 800, 480])
def test_no_page_scrolls_sideways_and_rows_hold_their_buttons_with_a_long_message(
    stack: ServiceStack,
    browser,
    session: Session,
    width: int,  # noqa: ANN001
) -> None:
    failed = made_job(stack.ctx, "acme")
    reason = "the song could not be decoded: " + "ffmpeg/said/" * 30 + " and a rather long explanation " * 6
    end_job(stack.ctx, failed.id, JobState.FAILED, code="bad_audio", message=reason)
    problems: list[str] = []
    page = _page(browser, problems, width=width, height=1000)
    _sign_in(page, stack, stack.tokens["content"])
    page.wait_for_selector(f"#job-{failed.id} .why")
    page.wait_for_selector(f"#job-{session.job['id']} .published")  # a published row, too
    sizes = page.evaluate(
        """() => ({
        page: document.documentElement.scrollWidth, window: window.innerWidth,
        header: [...document.querySelectorAll('body > header *')].map(e => e.getBoundingClientRect().right),
        rows: [...document.querySelectorAll('.take')].map(r => {
            const card = r.closest('.album').getBoundingClientRect();
            return [card.right, ...[...r.querySelectorAll('button, .why, .note, .published, form')]
                .map(e => e.getBoundingClientRect().right)]; }),
        })"""
    )
    if width in (1280, 800):
        _shot(page.locator("#jobs"), "narrow" if width == 800 else "wide")
    page.close()
    with stack.as_("content") as client:
        client.delete(f"/v1/jobs/{failed.id}")
    assert sizes["page"] <= sizes["window"], f"the page is {sizes['page']} px wide in a {width} px window"
    assert max(sizes["header"]) <= sizes["window"]
    for card_right, *inside in sizes["rows"]:
        assert all(right <= card_right + 0.5 for right in inside), (card_right, inside)
    assert problems == []


def test_a_folder_is_an_album_and_a_refused_file_looks_refused(
    stack: ServiceStack,
    browser,
    tmp_path: Path,  # noqa: ANN001
) -> None:
    folder = tmp_path / "Road Trip Mix"
    folder.mkdir()
    (song,) = cut_songs(folder, 1, seconds=6)
    (folder / "liner notes.mp3").write_text("this is not a song, just my notes\n" * 20)
    page = _page(browser, width=1280, height=900)
    _sign_in(page, stack, stack.tokens["content"])
    page.wait_for_selector("#who:not([hidden])")
    page.set_input_files("#folder-input", str(folder))
    refused = page.wait_for_selector("#upload-list li.refused:has-text('liner notes.mp3')", timeout=60_000)
    page.wait_for_selector(f"#upload-list li.rendering:has-text('{song.name}')", timeout=60_000)
    row = {
        "label": refused.query_selector(".file-state").text_content(),
        "bar": refused.query_selector("progress"),
        "message": refused.query_selector(".msg").text_content(),
        "other": page.text_content(f"#upload-list li:has-text('{song.name}') .msg"),
    }
    page.wait_for_selector(".album h3:text-is('Road Trip Mix')", timeout=60_000)
    _shot(page.locator("#upload"), "refused")
    page.close()
    assert row["label"] == "Refused" and row["bar"] is None, "a refused file has no (full) progress bar"
    message = row["message"]
    assert "not a song" in message and "“this is not a song" in message
    assert "b'" not in message and message.endswith(".") and not message.endswith(("?.", "..")), message
    assert "rendering in the album “Road Trip Mix”" in row["other"]


def test_a_fitness_key_browses_routines_and_cannot_upload(
    stack: ServiceStack,
    browser,
    session: Session,  # noqa: ANN001
) -> None:
    assert "Published as" in session.published["note"]  # by the content team's session, through the page
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
    assert (
        page.locator("#routine-list .routine button:text-is('Play')").count() == 0
    )  # no player for this key
    page.click("#routine-list .routine button:text-is('Downloads')")
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
    page.wait_for_selector(
        "#upload-list li.refused:has-text('notes.txt') .msg:text-matches('not a song format')"
    )
    refused = page.wait_for_selector("#upload-list li.refused:has-text('fake.ogg') .msg", timeout=60_000)
    assert "does not start like a .ogg file" in refused.text_content()
    page.route("**/v1/**", lambda route: route.abort("connectionrefused"))
    page.wait_for_selector("#banner:not([hidden]):text-matches('does not answer')", timeout=60_000)
    assert page.is_visible("#jobs")  # the page stays, with its last known state
    page.close()
