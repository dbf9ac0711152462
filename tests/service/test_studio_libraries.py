"""The Studio's Libraries view in a real browser: a folder of motion files in, a team style out, an album.

A content-team page (Debian's chromium, Playwright) uploads a folder whose
subfolders are styles (FBX and GLB exports of real CMU clips, a file the build
must refuse, and a text file the page leaves out), watches the build, sees
each style's minutes and its contact sheet, and renders a song in the library.
Set ``CHOREO_STUDIO_LIBRARIES_SCREENSHOT=docs/studio-libraries.png`` to keep the view's picture.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from choreo.mocap.dataset import retargeted_dance
from exporters.fbx import write_fbx
from exporters.gltf import write_glb
from tests.service.helpers import ServiceStack, cut_songs, wait_for_batch
from tests.service.test_studio_browser import _page, _sign_in, browser  # noqa: F401 - the module fixture

pytestmark = pytest.mark.service

MOCAP = Path(__file__).resolve().parents[3] / "shared" / "data" / "mocap"


def _team_folder(root: Path) -> Path:
    team = root / "acme_moves"
    for style, clips in {"contemporary": ("05_02", "05_04"), "power": ("85_14_keijiro_neo30fps",)}.items():
        (team / style).mkdir(parents=True)
        for clip in clips:
            folder = "cmu_05_modern" if clip.startswith("05") else "cmu_85_breakdance"
            motion, _ = retargeted_dance(MOCAP / folder / f"{clip}.bvh")
            if style == "power":
                write_glb(motion, team / style / f"{clip[:5]}.glb", rig="mixamo")
            else:
                write_fbx(motion, team / style / f"{clip}.fbx", rig="mixamo")
    (team / "power" / "broken.fbx").write_text("not an FBX")
    (team / "README.txt").write_text("our moves")
    return team


def test_a_folder_becomes_a_library_whose_styles_an_album_is_danced_in(
    stack: ServiceStack,
    browser,  # noqa: ANN001, F811
    tmp_path: Path,
) -> None:
    problems: list[str] = []
    page = _page(browser, problems)
    _sign_in(page, stack, stack.tokens["content"])
    page.wait_for_selector("#libraries:not([hidden])")
    page.fill("#library-form input[name=name]", "acme moves")
    page.fill("#library-form input[name=credit]", "acme dance team")
    page.set_input_files("#library-folder", str(_team_folder(tmp_path)))
    card = page.wait_for_selector("#library-list article[data-state=ready]", timeout=300_000)
    assert "1 not motion files, left out" in page.text_content("#library-progress")
    captions = [c.text_content() for c in card.query_selector_all("figcaption")]
    assert len(captions) == 2 and all(" min, " in c and "phrases" in c and "BPM" in c for c in captions), (
        captions
    )
    page.wait_for_function(
        "[...document.querySelectorAll('#library-list article img')].every((i) => i.naturalWidth > 0)"
    )
    refused = card.query_selector("li[data-status=refused]")
    assert refused is not None and "power/broken.fbx" in refused.text_content()
    assert "Assimp could not read it" in refused.text_content()
    if os.environ.get("CHOREO_STUDIO_LIBRARIES_SCREENSHOT"):
        page.locator("#libraries").screenshot(path=os.environ["CHOREO_STUDIO_LIBRARIES_SCREENSHOT"])
    card.query_selector("button.use-library").click()
    page.wait_for_selector("#library-note:not([hidden])")
    styles = page.eval_on_selector_all(
        "#options-fields select[name=style] option", "(os) => os.map((o) => o.value)"
    )
    assert styles == ["auto", "contemporary", "power"]
    (song,) = cut_songs(tmp_path, 1, seconds=20.0)
    page.set_input_files("#file-input", str(song))
    row = page.wait_for_selector("#upload-list li[data-batch]", timeout=120_000)
    assert "rendering in" in row.text_content()
    batch_id = row.get_attribute("data-batch")
    with stack.as_("content") as client:
        wait_for_batch(client, batch_id)
        job = next(j for j in client.get("/v1/jobs").json()["items"] if j["batch_id"] == batch_id)
        library_id = card.get_attribute("id").removeprefix("library-")
    assert job["state"] == "done", job
    assert job["options"]["library"] == library_id
    assert job["summary"]["style"] in ("contemporary", "power")
    assert not problems, problems
