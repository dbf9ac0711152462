"""One RenderOptions for the command line and the service; the job options narrow it."""

from __future__ import annotations

import hashlib
import json

import pytest
from pydantic import ValidationError

from api.schemas import SubmitCreate
from choreo.contracts.choices import DANCE_FORMATS, DEFAULT_FPS, PREVIEW_FORMATS, RIGS
from choreo.contracts.options import RenderOptions
from choreo.errors import ParameterError
from choreo.service.records import JobOptions

SHA = "ab" * 32


def test_defaults_are_the_same_on_both_paths() -> None:
    # a job may also name a team library (the service's alone): unset, it dances on the shipped one
    assert RenderOptions().model_dump() == JobOptions().model_dump(exclude={"library"})
    assert JobOptions().library is None
    assert RenderOptions().fps == DEFAULT_FPS and RenderOptions().rig == RIGS[0]


def test_parse_names_every_bad_option_in_one_error() -> None:
    with pytest.raises(ParameterError) as caught:
        RenderOptions.parse(fps=29, rig="x", units="mm")
    message = str(caught.value)
    assert "fps: unsupported fps 29" in message
    assert "rig: unknown rig 'x'" in message
    assert "units:" in message


def test_formats_keep_order_drop_duplicates_and_jobs_take_dance_formats_only() -> None:
    assert RenderOptions(formats=("glb", "bvh", "glb")).formats == ("glb", "bvh")
    assert RenderOptions(formats=PREVIEW_FORMATS).formats == PREVIEW_FORMATS
    assert JobOptions(formats=list(DANCE_FORMATS)).formats == DANCE_FORMATS
    with pytest.raises(ValidationError, match="gif"):
        JobOptions(formats=["gif"])
    with pytest.raises(ValidationError, match="formats"):
        RenderOptions(formats=())


def test_a_job_may_ask_for_units_and_they_change_its_key() -> None:
    body = SubmitCreate.model_validate({"tracks": [SHA], "options": {"units": "cm", "rig": "mixamo"}})
    assert body.options.units == "cm"
    assert body.options.fingerprint(SHA) != JobOptions(rig="mixamo").fingerprint(SHA)
    with pytest.raises(ValidationError, match="units"):
        SubmitCreate.model_validate({"tracks": [SHA], "options": {"units": "mm"}})


def test_options_left_at_their_old_defaults_keep_out_of_the_key_and_the_library_is_in_it() -> None:
    """Units, the mp4 excerpt, the energy and the synth at their old defaults are left out of the key;
    every job's key names the library its dance is planned on, the network's too."""
    from choreo.models import shipped_library_sha256

    options = JobOptions(formats=["glb", "bvh"], seed=4, style="salsa", synth="model")
    before = {
        "fps": 30,
        "formats": ["bvh", "glb"],
        "style": "salsa",
        "seed": 4,
        "rig": "smpl",
        "in_place": False,
    }
    canonical = before | {"track": SHA, "library": shipped_library_sha256()}
    expected = hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()
    assert options.fingerprint(SHA) == expected


def test_a_blend_key_names_the_library_the_energy_and_the_synth() -> None:
    blend = JobOptions(seed=4)
    assert blend.synth == "blend"
    keys = {
        blend.fingerprint(SHA),
        JobOptions(seed=4, synth="model").fingerprint(SHA),
        JobOptions(seed=4, energy="high").fingerprint(SHA),
    }
    assert len(keys) == 3
    canonical = blend.model_dump() | {"formats": ["bvh"], "track": SHA}
    without_library = hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()
    assert blend.fingerprint(SHA) != without_library
    with pytest.raises(ValidationError, match="energy"):
        JobOptions(energy="loud")


def test_blank_units_mean_the_rigs_own() -> None:
    assert RenderOptions(units="").units is None
    assert JobOptions.model_validate({"units": ""}) == JobOptions()
