"""The provenance record every exported file carries, and where FBX keeps it."""

from __future__ import annotations

import json

import pytest
from test_bvh_fbx_support import random_dance

from choreo.contracts.provenance import Provenance, generator_name
from choreo.errors import ParameterError
from exporters.fbx.binary import read_fbx
from exporters.fbx.writer import write_fbx

SHA = "ab" * 32
CMU = "The data used in this project was obtained from mocap.cs.cmu.edu."


def test_round_trip_through_json() -> None:
    prov = Provenance("model-2", 42, "salsa", SHA, [CMU, "second credit"], model_trained=True)
    assert prov.data_credits == (CMU, "second credit")
    assert Provenance.from_json(prov.to_json()) == prov
    data = json.loads(prov.to_json())
    assert list(data) == [
        "generator",
        "model_version",
        "seed",
        "style",
        "song_sha256",
        "data_credits",
        "model_trained",
        "synthesizer",
        "energy",
        "library_sha256",
    ]
    assert data["generator"].startswith("Choreo") and data["generator"] == generator_name()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"model_version": ""}, "model_version"),
        ({"seed": -1}, "seed"),
        ({"seed": True}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"style": ""}, "style"),
        ({"song_sha256": "AB" * 32}, "song_sha256"),
        ({"song_sha256": "ab" * 31}, "song_sha256"),
        ({"data_credits": "one string"}, "data_credits"),
        ({"data_credits": [1, 2]}, "data_credits"),
        ({"model_trained": 1}, "model_trained"),
    ],
)
def test_bad_fields_are_named(changes: dict, message: str) -> None:
    fields = {"model_version": "m", "seed": 0, "style": "modern", "song_sha256": SHA, "data_credits": ()}
    fields["model_trained"] = False
    fields.update(changes)
    with pytest.raises(ParameterError, match=message):
        Provenance(**fields)


def test_from_dict_names_a_missing_key_and_rejects_bad_json() -> None:
    with pytest.raises(ParameterError, match="'song_sha256'"):
        Provenance.from_dict({"model_version": "m", "seed": 0, "style": "whirl"})
    with pytest.raises(ParameterError, match="'model_trained'"):
        Provenance.from_dict({"model_version": "m", "seed": 0, "style": "whirl", "song_sha256": SHA})
    with pytest.raises(ParameterError, match="not valid JSON"):
        Provenance.from_json("{seed: 1")
    with pytest.raises(ParameterError, match="object"):
        Provenance.from_json("[1, 2]")


def test_fbx_scene_info_carries_every_field(rng, tmp_path) -> None:
    prov = Provenance("model-2", 2**40, "whirl", SHA, (CMU,), model_trained=False)
    path = write_fbx(random_dance(rng, 1.0, 30), tmp_path / "dance.fbx", provenance=prov)
    _, nodes = read_fbx(path)
    info = next(n for n in nodes if n.name == "FBXHeaderExtension").find("SceneInfo")
    meta = info.find("MetaData")
    assert Provenance.from_json(meta.find("Comment").values()[0]) == prov
    assert "whirl" in meta.find("Subject").values()[0] and meta.find("Revision").values() == ["model-2"]
    props = {p.values()[0]: p.values()[4:] for p in info.find("Properties70").children}
    assert props["Choreo|Seed"] == [str(2**40)] and props["Choreo|DataCredits"] == [CMU]
    assert props["Original|FileName"] == ["dance.fbx"]


def test_fbx_without_provenance_has_empty_fields(rng, tmp_path) -> None:
    path = write_fbx(random_dance(rng, 1.0, 30), tmp_path / "dance.fbx")
    _, nodes = read_fbx(path)
    info = next(n for n in nodes if n.name == "FBXHeaderExtension").find("SceneInfo")
    assert info.find("MetaData").find("Comment").values() == [""]
    assert not any(p.values()[0].startswith("Choreo|") for p in info.find("Properties70").children)
