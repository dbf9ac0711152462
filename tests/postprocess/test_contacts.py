"""Known answers for the flight detector."""

from __future__ import annotations

import numpy as np

from choreo.motion.contacts import FLIGHT_CLEARANCE_M, airborne_frames


def test_a_jump_is_airborne_from_take_off_to_landing_and_tiptoe_is_not() -> None:
    fps = 30
    lowest = np.full(90, 0.015)  # standing: the toes 1.5 cm up
    t = np.arange(15) / fps
    lowest[20:35] = 0.015 + 2.0 * t * (t[-1] - t)  # a 0.47 s jump, its apex about 11 cm up
    lowest[50:70] = 0.06  # on tiptoe: above the toe's contact height, never clearing the floor
    positions = np.zeros((90, 24, 3))
    positions[..., 1] = lowest[:, None] + np.linspace(0.0, 1.5, 24)[None, :]
    air = airborne_frames(positions)
    assert lowest[20:35].max() > FLIGHT_CLEARANCE_M
    expected = np.zeros(90, dtype=bool)
    expected[20:35] = lowest[20:35] > 0.05
    np.testing.assert_array_equal(air, expected)
    assert not air[50:70].any()
