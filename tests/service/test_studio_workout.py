"""The Studio shows a workout's cue sheet under the player and on its timeline, and counts in.

A content key submits one workout job and one plain dance of the same song (real
workers render them), the browser plays them, and the page is read as a person
sees it: the cue sheet's rows, the count-in's numbers on the song's beat, the
song playing with the 8-count being danced marked, and the timeline's cue lane
(one band per 8-count, the same move the same colour, following the zoom), which
a plain dance does not have.
"""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import sync_playwright

from tests.service.helpers import SONGS, ServiceStack, ensure_studio_built, upload, wait_for_batch
from tests.service.test_studio_browser import CHROMIUM, CHROMIUM_ARGS, _play, _sign_in

SONG = SONGS["vibe_ace"]
# Each band's colour, read off the canvas at the band's foot left of its label, and the canvas's height.
_TWO_FRAMES = "new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"
_BAND_PIXELS = """bands => {
  const canvas = document.getElementById('timeline');
  const g = canvas.getContext('2d');
  return { height: canvas.height, pixels: bands.map((b) =>
    Array.from(g.getImageData(Math.floor(b.x0) + 2, b.top + b.height - 2, 1, 1).data).join()) };
}"""


def _assert_bands_in_window(
    bands: list[dict], window: dict, cues: dict[int, dict], whole: dict[int, float]
) -> None:
    """Each band spans its 8-count's time in ``window`` (clipped at its edges), and a band wholly in
    view is over three times as wide as in the whole song's view (``whole``: index to pixels)."""
    pixels_per_s = window["width"] / (window["end"] - window["start"])
    for band in bands:
        cue = cues[band["index"]]
        x0, x1 = ((cue[k] - window["start"]) * pixels_per_s for k in ("start_s", "end_s"))
        assert band["x0"] == pytest.approx(max(0.0, x0), abs=1.0), band
        assert band["x1"] == pytest.approx(min(window["width"], x1), abs=1.0), band
        if x0 >= 0 and x1 <= window["width"]:
            assert band["x1"] - band["x0"] > 3 * whole[band["index"]], band


@pytest.fixture(scope="module")
def jobs(stack: ServiceStack) -> dict[str, dict]:
    """A pyramid workout and a plain dance of one song, rendered."""
    with stack.as_("content") as client:
        track = upload(client, SONG).json()
        submitted = {}
        for kind, extra in (("workout", {"routine": "pyramid"}), ("dance", {})):
            answer = client.post(
                "/v1/jobs", json={"tracks": [track["sha256"]], "options": {"formats": ["glb"], **extra}}
            )
            assert answer.status_code == 202, answer.text
            submitted[kind] = answer.json()
        for submit in submitted.values():
            wait_for_batch(client, submit["batch"]["id"], timeout_s=600)
        return {k: client.get(f"/v1/jobs/{s['jobs'][0]['id']}").json() for k, s in submitted.items()}


@pytest.fixture(scope="module")
def workout_job(jobs: dict[str, dict]) -> dict:
    return jobs["workout"]


def test_the_cue_sheet_is_under_the_player_and_a_count_in_starts_the_workout(
    stack: ServiceStack, workout_job: dict
) -> None:
    routine = workout_job["summary"]["routine"]
    assert routine["profile"] == "pyramid" and routine["cues"]
    ensure_studio_built()
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 1300})
        _sign_in(page, stack, stack.tokens["content"])
        page.wait_for_selector(f"#job-{workout_job['id']} button[data-job]:not([disabled])", timeout=120_000)
        _play(page, workout_job)
        rows = page.eval_on_selector_all("#cue-sheet table.cues tr", "rs => rs.map(r => r.textContent)")
        assert len(rows) == 1 + len(routine["cues"])
        first = next(c for c in routine["cues"] if c["index"] > 0)
        assert first["name"] in "".join(rows) and "right" in "".join(rows)
        page.evaluate("document.getElementById('audio').currentTime = 0")
        page.click("#play")
        seen = []
        started = time.monotonic()
        while time.monotonic() - started < 6 and page.evaluate("window.choreoStudio.countingIn"):
            seen.append(page.text_content("#count-in"))
            page.wait_for_timeout(50)
        counted = list(dict.fromkeys(seen))
        assert counted == ["5", "6", "7", "8"], seen
        beat_s = 60.0 / workout_job["summary"]["tempo_bpm"]
        assert time.monotonic() - started == pytest.approx(4 * beat_s, abs=0.6)
        page.wait_for_function(f"window.choreoStudio.audioTime > {first['start_s'] + 0.5}", timeout=30_000)
        marked = page.eval_on_selector_all("#cue-sheet tr.now", "rs => rs.map(r => r.dataset.start)")
        assert len(marked) == 1
        browser.close()


def test_the_timeline_draws_one_band_per_8_count_and_a_plain_dance_none(
    stack: ServiceStack, jobs: dict[str, dict], tmp_path_factory: pytest.TempPathFactory
) -> None:
    workout, dance = jobs["workout"], jobs["dance"]
    counts = [c for c in workout["summary"]["routine"]["cues"] if c["index"] > 0]
    assert len(counts) > 4 and dance["summary"].get("routine") is None
    ensure_studio_built()
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 1300})
        _sign_in(page, stack, stack.tokens["content"])
        page.wait_for_selector(f"#job-{workout['id']} button[data-job]:not([disabled])", timeout=120_000)
        _play(page, workout)
        page.click("#zoom-all")
        page.evaluate(_TWO_FRAMES)  # drawn at least once since
        bands, whole = page.evaluate("[window.choreoStudio.cueBands, window.choreoStudio.timelineWindow]")
        assert [(b["index"], b["name"], b["side"]) for b in bands] == [
            (c["index"], c["name"], c["side"]) for c in counts
        ]
        assert all(b["x1"] > b["x0"] for b in bands)
        assert all(a["x1"] <= b["x0"] + 1 for a, b in zip(bands, bands[1:], strict=False))
        drawn = page.evaluate(_BAND_PIXELS, bands)
        assert drawn["height"] > 64  # the cue lane under the marks
        colour_of_move: dict[int, str] = {}
        for cue, pixel in zip(counts, drawn["pixels"], strict=True):
            assert pixel != "255,255,255,255", cue  # painted, not the lane's white
            assert colour_of_move.setdefault(cue["move"], pixel) == pixel, cue
        assert len(set(colour_of_move.values())) == len(colour_of_move)  # one colour per move
        by_met = sorted(bands, key=lambda b: b["met"])  # the harder the 8-count, the taller its band
        assert all(a["height"] <= b["height"] for a, b in zip(by_met, by_met[1:], strict=False))
        assert by_met[-1]["height"] > by_met[0]["height"], [b["met"] for b in by_met]
        shot = tmp_path_factory.mktemp("cues") / "studio-cues-timeline.png"
        page.locator("#timeline-box").screenshot(path=str(shot))
        page.click("#zoom-in")
        page.click("#zoom-in")
        page.evaluate(_TWO_FRAMES)
        closer, window = page.evaluate("[window.choreoStudio.cueBands, window.choreoStudio.timelineWindow]")
        assert 0 < len(closer) < len(bands) and window["end"] - window["start"] < whole["end"] / 3
        at = {c["index"]: c for c in counts}
        was = {b["index"]: b["x1"] - b["x0"] for b in bands}
        _assert_bands_in_window(closer, window, at, was)
        page.hover("#timeline")
        page.keyboard.down("Shift")
        page.mouse.wheel(0, 800)  # pans later in the song
        page.keyboard.up("Shift")
        page.evaluate(_TWO_FRAMES)
        panned, later = page.evaluate("[window.choreoStudio.cueBands, window.choreoStudio.timelineWindow]")
        assert later["start"] > window["start"] + 1 and panned and panned[-1]["index"] > closer[-1]["index"]
        _assert_bands_in_window(panned, later, at, was)
        page.locator("#timeline-box").screenshot(path=str(shot.with_name("studio-cues-zoomed.png")))
        _play(page, dance)
        page.wait_for_timeout(300)
        assert page.evaluate("window.choreoStudio.cueBands") == []
        assert page.evaluate("document.getElementById('timeline').height") == 64
        browser.close()
