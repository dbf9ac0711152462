"""The Studio shows a workout's cue sheet under the player and counts in before its first 8-count.

A content key submits one workout job (a real worker renders it), the browser
plays it, and the page is read as a person sees it: the cue sheet's rows, the
count-in's numbers on the song's beat, then the song playing with the 8-count
being danced marked.
"""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import sync_playwright

from tests.service.helpers import SONGS, ServiceStack, ensure_studio_built, upload, wait_for_batch
from tests.service.test_studio_browser import CHROMIUM, CHROMIUM_ARGS, _play, _sign_in

SONG = SONGS["vibe_ace"]


@pytest.fixture(scope="module")
def workout_job(stack: ServiceStack) -> dict:
    with stack.as_("content") as client:
        track = upload(client, SONG).json()
        answer = client.post(
            "/v1/jobs",
            json={"tracks": [track["sha256"]], "options": {"formats": ["glb"], "routine": "pyramid"}},
        )
        assert answer.status_code == 202, answer.text
        submit = answer.json()
        wait_for_batch(client, submit["batch"]["id"], timeout_s=600)
        return client.get(f"/v1/jobs/{submit['jobs'][0]['id']}").json()


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
