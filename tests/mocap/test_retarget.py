"""Retargeting the four CMU skeletons onto SMPL: shape kept, motion kept, feet on the floor."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.mocap.quality import retarget_quality
from choreo.mocap.retarget import FLOOR_CLEARANCE_M, retarget, source_joint_positions
from choreo.mocap.rigs import detect_rig
from choreo.motion.bvh_reader import BvhData
from choreo.motion.kinematics import facing_angle, joint_positions
from choreo.motion.motion import Motion
from choreo.motion.skeleton import JOINT_NAMES, SMPL

STYLES = ["salsa", "modern", "breakdance", "whirl"]
_J = {n: i for i, n in enumerate(JOINT_NAMES)}
# Bones whose direction the retargeter copies exactly from the source (limbs and collars).
_LIMB_BONES = [
    (f"{s}_{a}", f"{s}_{b}")
    for s in ("left", "right")
    for a, b in (
        ("hip", "knee"),
        ("knee", "ankle"),
        ("shoulder", "elbow"),
        ("elbow", "wrist"),
        ("collar", "shoulder"),
    )
]


@pytest.mark.parametrize("style", STYLES)
def test_smpl_bone_lengths_are_kept(retargeted: dict[str, Motion], style: str) -> None:
    pos = joint_positions(retargeted[style])
    parents = list(SMPL.parents[1:])
    lengths = np.linalg.norm(pos[:, 1:] - pos[:, parents], axis=-1)
    np.testing.assert_allclose(lengths, np.broadcast_to(SMPL.bone_lengths()[1:], lengths.shape), atol=1e-9)


@pytest.mark.parametrize("style", STYLES)
def test_feet_rest_on_the_floor(retargeted: dict[str, Motion], style: str) -> None:
    pos = joint_positions(retargeted[style])
    feet = pos[:, [_J["left_foot"], _J["right_foot"], _J["left_ankle"], _J["right_ankle"]], 1].min(axis=1)
    # the feet stand on the floor (breakdance floor work lifts them for long stretches), and no
    # joint sinks below it
    assert abs(np.percentile(feet, 5) - FLOOR_CLEARANCE_M) < (0.02 if style == "breakdance" else 0.005)
    assert np.percentile(feet, 25 if style == "breakdance" else 50) < 0.08
    assert np.percentile(pos[..., 1].min(axis=1), 1) > -0.03 - 1e-6


@pytest.mark.parametrize("style", STYLES)
def test_limb_directions_follow_the_source(
    source_clips: dict[str, BvhData], retargeted: dict[str, Motion], style: str
) -> None:
    bvh = source_clips[style]
    src, _ = source_joint_positions(bvh, detect_rig(bvh))
    pos = joint_positions(retargeted[style])
    # undo the turn to face +Z: compare angles between bones, which a common rotation keeps
    for a, b in _LIMB_BONES[:4]:
        for c, d in _LIMB_BONES[4:]:
            s1, s2 = src[:, _J[b]] - src[:, _J[a]], src[:, _J[d]] - src[:, _J[c]]
            t1, t2 = pos[:, _J[b]] - pos[:, _J[a]], pos[:, _J[d]] - pos[:, _J[c]]
            cos_s = np.sum(s1 * s2, -1) / np.linalg.norm(s1, axis=-1) / np.linalg.norm(s2, axis=-1)
            cos_t = np.sum(t1 * t2, -1) / np.linalg.norm(t1, axis=-1) / np.linalg.norm(t2, axis=-1)
            np.testing.assert_allclose(cos_t, cos_s, atol=1e-6)


@pytest.mark.parametrize("style", STYLES)
def test_knees_bend_forward_about_their_hinge(retargeted: dict[str, Motion], style: str) -> None:
    # A wrong twist or a left/right mix-up shows as knees turning about other axes or backwards.
    for knee in ("left_knee", "right_knee"):
        aa = retargeted[style].rotations[:, _J[knee]]
        angle = np.linalg.norm(aa, axis=-1)
        bent = angle > 0.5
        assert bent.sum() > 10
        assert np.mean(aa[bent, 0] / angle[bent]) > 0.8


@pytest.mark.parametrize("style", STYLES)
def test_clip_starts_facing_forward_with_left_on_plus_x(retargeted: dict[str, Motion], style: str) -> None:
    motion = retargeted[style]
    assert abs(facing_angle(motion)[0]) < 1e-6
    pos = joint_positions(motion)[0]
    assert pos[_J["left_shoulder"], 0] > pos[_J["right_shoulder"], 0]
    assert pos[_J["head"], 1] > pos[_J["pelvis"], 1] > pos[_J["left_ankle"], 1]


def test_root_translation_scaled_to_smpl_legs(retargeted: dict[str, Motion]) -> None:
    # a standing pelvis sits about SMPL's rest pelvis height above the floor, whatever the source's units
    for style in ("salsa", "modern", "whirl"):  # breakdance spends much of its time on the floor
        motion = retargeted[style]
        assert 0.75 < np.median(motion.root_translation[:, 1]) < 1.0


def test_unknown_skeleton_is_refused(source_clips: dict[str, BvhData]) -> None:
    bvh = source_clips["salsa"]
    renamed = BvhData(
        names=tuple(f"x{i}" for i in range(len(bvh.names))),
        parents=bvh.parents,
        offsets=bvh.offsets,
        channels=bvh.channels,
        frames=bvh.frames,
        frame_time_s=bvh.frame_time_s,
        end_sites=bvh.end_sites,
        declared_frames=bvh.declared_frames,
    )
    with pytest.raises(ParameterError, match="odd.bvh: unknown skeleton"):
        retarget(renamed, source="odd.bvh")


def test_z_up_source_is_refused(source_clips: dict[str, BvhData]) -> None:
    bvh = source_clips["breakdance"]
    frames = bvh.frames.copy()
    frames[:, 3] += 90.0  # the root's Zrotation: the dancer lies on the floor
    lying = BvhData(
        names=bvh.names,
        parents=bvh.parents,
        offsets=bvh.offsets,
        channels=bvh.channels,
        frames=frames,
        frame_time_s=bvh.frame_time_s,
        end_sites=bvh.end_sites,
        declared_frames=bvh.declared_frames,
    )
    with pytest.raises(ParameterError, match="lying.bvh: .*expects Y up"):
        retarget(lying, source="lying.bvh")


@pytest.mark.parametrize("style", ["salsa", "modern", "whirl"])
def test_retargeting_keeps_the_sources_foot_contacts(
    source_clips: dict[str, BvhData], retargeted: dict[str, Motion], style: str
) -> None:
    bvh = source_clips[style]
    quality = retarget_quality(bvh, detect_rig(bvh), retargeted[style])
    # retargeting adds no sliding: SMPL's feet skate at most a little more often than the performer's
    # (the mocap itself is not skate-free; contact heights differ with the feet's build, hence the margin)
    assert quality["foot_skate_smpl"] < quality["foot_skate_source"] + 0.1
    assert quality["feet_p5_m"] == pytest.approx(FLOOR_CLEARANCE_M, abs=0.005)
