"""What the stages hand on: one object each, one file each, read back exactly and validated."""

from __future__ import annotations

import io
import json
from dataclasses import replace

import numpy as np
import pytest
from pydantic import ValidationError

from choreo.audio import MusicFeatures
from choreo.contracts.contacts import CONTACT_POINTS, ContactTrack
from choreo.contracts.generated import GeneratedMotion
from choreo.contracts.options import RenderOptions
from choreo.contracts.plan import Plan, Segment
from choreo.contracts.provenance import Provenance
from choreo.contracts.summary import DanceBrief, DanceSummary
from choreo.contracts.timing import SongTiming
from choreo.errors import AudioError, ParameterError
from choreo.motion import Motion
from choreo.prepared import PreparedSong

DURATION_S = 40 / 30


def _plan() -> Plan:
    segment = Segment(
        phrase=3,
        start_bar=0,
        n_bars=1,
        song_beats_s=(0.0, 0.5, 1.0, DURATION_S),
        clip="60_01",
        source="60_01.bvh",
        source_span_s=(1.0, 2.5),
        mirrored=False,
        style="salsa",
        phrase_beats=4,
        beat_ratio=1.0,
        stretch=0.9,
    )
    return Plan("lib-1", "ab" * 32, "salsa", "auto", 7, DURATION_S, (segment,), ("a note",))


def _generated(rng: np.random.Generator) -> GeneratedMotion:
    poses = rng.standard_normal((40, 75)).astype(np.float32).astype(np.float64)
    provenance = Provenance("m-3", 7, "salsa", "cd" * 32, ("credit",), model_trained=False)
    song = SongTiming(np.array([0.5, 1.0, 1.5]), np.array([0.5]), 120.0, DURATION_S)
    contacts = ContactTrack(30.0, rng.random((40, len(CONTACT_POINTS))) < 0.5)
    return GeneratedMotion(Motion.from_array(poses, fps=30), provenance, song, _plan(), contacts)


def test_the_performed_dance_round_trips_through_npz_exactly() -> None:
    generated = _generated(np.random.default_rng(0))
    buffer = io.BytesIO()
    generated.to_npz(buffer)
    back = GeneratedMotion.from_npz(io.BytesIO(buffer.getvalue()))
    np.testing.assert_array_equal(back.motion.to_array(), generated.motion.to_array())
    assert back.motion.fps == 30
    assert back.provenance == generated.provenance and back.provenance.model_trained is False
    np.testing.assert_array_equal(back.song.beat_times, generated.song.beat_times)
    np.testing.assert_array_equal(back.song.downbeat_times, generated.song.downbeat_times)
    assert (back.song.tempo_bpm, back.song.duration_s) == (120.0, generated.song.duration_s)
    assert back.plan == generated.plan and isinstance(back.plan, Plan)
    np.testing.assert_array_equal(back.contacts.frames, generated.contacts.frames)
    assert back.contacts.fps == 30


def test_contacts_that_do_not_fit_the_motion_are_refused() -> None:
    generated = _generated(np.random.default_rng(4))
    with pytest.raises(ParameterError, match="do not match"):
        replace(generated, contacts=ContactTrack(30.0, np.zeros((39, len(CONTACT_POINTS)), dtype=bool)))


def _plain_summary(generated: GeneratedMotion) -> DanceSummary:
    """The summary a 40-frame render of ``generated`` with the default options and no files would write."""
    return DanceSummary.describe(
        generated,
        frames=40,
        fps=30,
        mean_joint_speed_m_per_s=1.0,
        options=RenderOptions(),
        files={},
        song_name="a",
        contacts=generated.contacts,
    )


def test_the_summary_states_the_song_s_tempo_and_the_dancer_s_pulse_apart(tmp_path) -> None:
    """A 180 BPM song danced mostly in half time: the tempo stays the song's, the pulse says 90."""
    first = replace(_plan().segments[0], song_beats_s=(0.0, 0.3), beat_ratio=1.0)
    half = replace(first, song_beats_s=(0.3, 0.8, DURATION_S), beat_ratio=0.5)
    plan = replace(_plan(), segments=(first, half))
    generated = replace(
        _generated(np.random.default_rng(4)),
        song=SongTiming(np.arange(0.0, DURATION_S, 1 / 3), np.array([0.0]), 180.0, DURATION_S),
        plan=plan,
    )
    summary = _plain_summary(generated)
    assert (summary.tempo_bpm, summary.pulse_ratio, summary.pulse_bpm) == (180.0, 0.5, 90.0)
    assert len(summary.beat_times) == 4  # the song's beats, not the dancer's steps
    free = replace(plan, segments=tuple(replace(s, free=True, beat_ratio=0.0) for s in plan.segments))
    assert free.pulse_ratio is None


def test_another_file_is_refused_naming_what_is_missing() -> None:
    buffer = io.BytesIO()
    np.savez(buffer, poses=np.zeros((2, 75)))
    with pytest.raises(ParameterError, match="missing"):
        GeneratedMotion.from_npz(io.BytesIO(buffer.getvalue()))


def test_a_performed_dance_whose_plan_is_broken_is_refused() -> None:
    buffer = io.BytesIO()
    _generated(np.random.default_rng(1)).to_npz(buffer)
    with np.load(io.BytesIO(buffer.getvalue())) as data:
        arrays = dict(data)
    plan = json.loads(str(arrays["plan"]))
    del plan["segments"]
    arrays["plan"] = np.array(json.dumps(plan))
    broken = io.BytesIO()
    np.savez(broken, **arrays)
    with pytest.raises(ParameterError, match="malformed plan"):
        GeneratedMotion.from_npz(io.BytesIO(broken.getvalue()))


def _features(rng: np.random.Generator) -> MusicFeatures:
    return MusicFeatures(
        fps=30,
        features=rng.standard_normal((40, 35)).astype(np.float32),
        beat_times=np.array([0.5, 1.0]),
        downbeat_times=np.array([0.5]),
        tempo_bpm=120.0,
        duration_s=DURATION_S,
    )


def test_the_prepared_song_round_trips_and_refuses_what_is_not_one() -> None:
    prepared = PreparedSong(_features(np.random.default_rng(2)), _plan())
    buffer = io.BytesIO()
    prepared.to_npz(buffer)
    back = PreparedSong.from_npz(io.BytesIO(buffer.getvalue()))
    np.testing.assert_array_equal(back.features.features, prepared.features.features)
    assert back.features.fps == 30 and back.plan == prepared.plan
    with pytest.raises(ParameterError, match="not a prepared song"):
        PreparedSong.from_npz(io.BytesIO(b"junk"))
    bad = io.BytesIO()
    np.savez(bad, features=np.frombuffer(b"junk", dtype=np.uint8), plan=np.array("{}"))
    with pytest.raises(AudioError, match="not a MusicFeatures file"):
        PreparedSong.from_npz(io.BytesIO(bad.getvalue()))


def test_the_summary_carries_a_typed_plan_and_its_brief_is_its_head(tmp_path) -> None:
    generated = _generated(np.random.default_rng(3))
    options = RenderOptions(formats=("bvh", "mp4"), seed=7)
    summary = DanceSummary.describe(
        generated,
        frames=40,
        fps=30,
        mean_joint_speed_m_per_s=1.23456,
        options=options,
        files={"bvh": tmp_path / "a.bvh"},
        song_name="a.ogg",
        contacts=generated.contacts,
    )
    written = json.loads(summary.write(tmp_path / "a.json").read_text())
    assert written["plan"] == generated.plan.to_dict() and "timings_s" not in written
    assert written["contacts"]["intervals_s"] == {
        name: [list(span) for span in spans] for name, spans in generated.contacts.intervals_s().items()
    }
    assert written["options"]["units"] is None  # the options' own unset fields stay in the file
    back = DanceSummary.model_validate(written)
    assert back == summary and back.plan == generated.plan and back.options == options
    assert back.brief() == DanceBrief(
        tempo_bpm=120.0,
        duration_s=round(DURATION_S, 6),
        style="salsa",
        mean_joint_speed_m_per_s=1.2346,
        frames=40,
        fps=30,
        model_version="m-3",
        model_trained=False,
    )
    with pytest.raises(ValidationError, match="plan format 99"):
        DanceSummary.model_validate(written | {"plan": {"format": 99}})


def test_the_summary_lists_the_breaks_the_plan_holds_and_they_round_trip() -> None:
    plan = replace(_plan(), breaks_s=((0.4, 0.9),))
    generated = replace(_generated(np.random.default_rng(5)), plan=plan)
    summary = _plain_summary(generated)
    assert summary.breaks_s == [[0.4, 0.9]]
    buffer = io.BytesIO()
    generated.to_npz(buffer)
    assert GeneratedMotion.from_npz(io.BytesIO(buffer.getvalue())).plan.breaks_s == ((0.4, 0.9),)
    written = json.loads(summary.model_dump_json())
    assert written["breaks_s"] == [[0.4, 0.9]] and written["plan"]["breaks_s"] == [[0.4, 0.9]]
