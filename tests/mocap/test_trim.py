"""Cutting calibration poses and still stretches from the ends of a clip."""

from __future__ import annotations

import numpy as np

from choreo.mocap.trim import active_span, is_t_pose
from choreo.motion.motion import Motion


def _still_move_still(fps: float = 30.0) -> Motion:
    # 1 s still, 2 s walking sideways at 0.6 m/s, 1 s still; arms hang down (a quarter turn at the shoulders)
    t = np.arange(int(4 * fps)) / fps
    x = 0.6 * np.clip(t - 1.0, 0.0, 2.0)
    root = np.stack([x, np.full_like(x, 0.94), np.zeros_like(x)], axis=1)
    rot = np.zeros((t.size, 24, 3))
    rot[:, 16, 2] = -1.3  # left shoulder down
    rot[:, 17, 2] = 1.3  # right shoulder down
    return Motion(fps=fps, root_translation=root, rotations=rot)


def test_still_ends_are_cut_with_a_margin() -> None:
    motion = _still_move_still()
    start, stop = active_span(motion, margin_s=0.5)
    # the speed is smoothed over 0.25 s, so the edges of activity blur by about that much
    assert abs(start / motion.fps - 0.5) <= 0.2
    assert abs(stop / motion.fps - 3.5) <= 0.2


def test_leading_t_pose_and_snap_are_cut() -> None:
    motion = _still_move_still()
    rot = motion.rotations.copy()
    rot[0, 16:18] = 0.0  # first frame: SMPL rest, a T-pose
    snapped = motion.replace(rotations=rot)
    assert is_t_pose(snapped)[0] and not is_t_pose(snapped)[1:].any()
    start, _ = active_span(snapped, margin_s=0.0)
    assert start >= 1
    assert active_span(motion, margin_s=0.0)[0] > 0.8 * motion.fps  # the still second goes too


def test_motion_without_activity_is_kept_whole() -> None:
    motion = _still_move_still()
    still = motion.replace(root_translation=np.zeros_like(motion.root_translation) + [0.0, 0.94, 0.0])
    assert active_span(still) == (0, still.n_frames)
