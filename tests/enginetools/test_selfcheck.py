"""The selfcheck's judgement of dance metrics against fp32."""

from __future__ import annotations

from choreo.enginetools.selfcheck import DANCE_TOLERANCES, TOLERANCES, dance_worse

REF = {"beat_align": 0.30, "foot_skate": 0.10, "pfc": 1.0, "jerk": 400.0}


def test_small_changes_pass():
    tested = {"beat_align": 0.29, "foot_skate": 0.11, "pfc": 1.004, "jerk": 420.0}
    assert dance_worse(REF, tested) == {}


def test_each_metric_fails_only_in_its_bad_direction():
    assert set(dance_worse(REF, {**REF, "beat_align": 0.25})) == {"beat_align"}
    assert dance_worse(REF, {**REF, "beat_align": 0.40}) == {}
    assert set(dance_worse(REF, {**REF, "foot_skate": 0.15})) == {"foot_skate"}
    assert dance_worse(REF, {**REF, "foot_skate": 0.0}) == {}
    assert set(dance_worse(REF, {**REF, "jerk": 480.0})) == {"jerk"}
    assert set(dance_worse(REF, {**REF, "pfc": 1.01})) == {"pfc"}


def test_tolerances_grow_with_lower_precision():
    assert TOLERANCES["fp32"].mean_deg < TOLERANCES["fp16"].mean_deg < TOLERANCES["int8"].mean_deg
    assert set(DANCE_TOLERANCES) == {"beat_align", "foot_skate", "pfc", "jerk"}
