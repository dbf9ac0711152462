"""The model description: which per-frame inputs a model takes, read from its metadata."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from tiny_engine_model import tiny_spec

from choreo.contracts.model_spec import ModelSpec
from choreo.errors import EngineError
from engines.base import check_chunk

GUIDE_INPUTS = (("music", 35), ("guide", 75), ("junction", 2), ("latent", 8))


def test_a_file_without_declared_inputs_takes_music_style_and_latent():
    spec = ModelSpec.from_metadata(tiny_spec(8).to_metadata())
    assert spec.input_widths == {"music": 35, "style": 4, "latent": 8}


def test_declared_inputs_survive_the_metadata_in_their_order():
    spec = dataclasses.replace(tiny_spec(8), styles=(), inputs=GUIDE_INPUTS)
    back = ModelSpec.from_metadata(spec.to_metadata())
    assert back == spec
    assert list(back.input_widths.items()) == list(GUIDE_INPUTS)


def test_a_chunk_is_checked_against_the_declared_inputs():
    spec = dataclasses.replace(tiny_spec(8), styles=(), inputs=GUIDE_INPUTS)
    good = {name: np.zeros((2, 16, width), np.float32) for name, width in GUIDE_INPUTS}
    assert check_chunk(good, spec) == (2, 16)
    with pytest.raises(EngineError, match="missing inputs \\['junction'\\]"):
        check_chunk({k: v for k, v in good.items() if k != "junction"}, spec)
    with pytest.raises(EngineError, match="'guide'"):
        check_chunk({**good, "guide": np.zeros((2, 16, 72), np.float32)}, spec)
