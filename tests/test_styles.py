"""Style names, and the tempo rule ``auto`` used before the music's character (the engine checks' demo)."""

from __future__ import annotations

import pytest

from choreo.choreography.style_choice import auto_style
from choreo.contracts.choices import STYLES
from choreo.errors import ParameterError


def test_auto_follows_the_tempo() -> None:
    assert auto_style(80.0) == "modern"
    assert auto_style(110.0) == "salsa"
    assert auto_style(160.0) == "breakdance"
    with pytest.raises(ParameterError, match="tempo must be a number"):
        auto_style(float("nan"))


def test_styles_verb_lists_every_style_and_auto(capsys: pytest.CaptureFixture[str]) -> None:
    from choreo.cli.main import main

    assert main(["styles"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" ")[0] for line in lines[: len(STYLES)]] == list(STYLES)
    assert lines[STYLES.index("salsa")] == "salsa"
    assert lines[STYLES.index("whirl")] == (
        "whirl (style 'whirl' is deprecated: too little data to plan from, merged into 'salsa')"
    )
    assert lines[-1].startswith("auto (by the music's character")


def test_options_route_marks_whirl_deprecated() -> None:
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from api.routes.studio import router

    app = FastAPI()
    app.include_router(router)
    fields = {f["name"]: f for f in TestClient(app).get("/v1/options").json()["fields"]}
    style = fields["style"]
    assert "whirl" in style["choices"]
    note = "style 'whirl' is deprecated: too little data to plan from, merged into 'salsa'"
    assert style["notes"] == {"whirl": note}
    assert "Style 'whirl' is deprecated" in style["description"]
    assert fields["fps"]["notes"] == {}
