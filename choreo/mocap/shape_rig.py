"""Find SMPL's joints in a skeleton by its shape, for rigs whose joint names no known rig uses.

A content team's file may name its bones anything (Blender's ``Bone.001``, a
studio's own scheme, the Khronos samples' ``leg_joint_L_1``). A humanoid
skeleton still has the same shape: two long chains reaching down to the
floor (the legs, from the hips), one reaching up (the spine to the head), and
two reaching out from the top of the spine (the arms). This module finds
them on the take's rest pose and animation:

- the **feet** are the two lowest end joints whose chains part high above
  them; where they part is the **pelvis**;
- the **head** is the highest end joint; the **arms** are the two end joints
  farthest out from the body's vertical axis that branch off the path from
  the pelvis to the head, on its two sides; where they branch is the chest;
- along a leg or an arm, joints that never bend in the animation (twist
  helpers, zero-length joints) are merged into their bone, and the two
  longest consecutive bones are thigh and shin, or upper arm and forearm:
  they give hip, knee and ankle, or shoulder, elbow and wrist;
- **left** is the side the toes and ``up`` agree on (``up x forward``), or,
  without toes, the side the joint names say (``Left``, ``L``, ``.l``).

The result is a :class:`~choreo.mocap.source_rig.SourceRig` like the named ones,
so the retargeter cannot tell the difference.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from choreo.errors import ParameterError
from choreo.mocap.readers.take import SourceTake
from choreo.mocap.source_rig import SourceRig

__all__ = ["SHAPE_RIG", "rig_by_shape"]

SHAPE_RIG = "by_shape"
"""The name of every rig found by shape."""

_BEND_DEG = 8.0
"""A joint whose bend stays under this (95th percentile over the take) is not an articulation."""

_LEFT = re.compile(r"left|(?:^|[^a-z])l(?:[^a-z]|$)|^l(?=[A-Z])")
_RIGHT = re.compile(r"right|(?:^|[^a-z])r(?:[^a-z]|$)|^r(?=[A-Z])")


class _Tree:
    """The take's joint tree with the lookups the search needs."""

    def __init__(self, take: SourceTake) -> None:
        self.take = take
        self.parents = take.parents
        self.children: list[list[int]] = [[] for _ in take.names]
        for j, p in enumerate(take.parents):
            if p >= 0:
                self.children[p].append(j)
        self.rest = take.rest_positions
        self.leaves = [j for j, c in enumerate(self.children) if not c]

    def path_to_root(self, j: int) -> list[int]:
        out = [j]
        while self.parents[out[-1]] >= 0:
            out.append(self.parents[out[-1]])
        return out

    def common_ancestor(self, a: int, b: int) -> int:
        above_a = set(self.path_to_root(a))
        return next((j for j in self.path_to_root(b) if j in above_a), -1)

    def path_down(self, top: int, end: int) -> list[int]:
        """Joints from just below ``top`` down to ``end`` (inclusive), root-side first."""
        path = self.path_to_root(end)
        return list(reversed(path[: path.index(top)]))


def _bends(take: SourceTake, chain: list[int]) -> np.ndarray:
    """Per interior joint of ``chain`` (which starts at its parent's joint), the 95th percentile of
    its bend over the take, degrees; ``chain[0]`` and ``chain[-1]`` get inf (they always count)."""
    pos = take.positions[:, chain]
    a = pos[:, 1:-1] - pos[:, :-2]
    b = pos[:, 2:] - pos[:, 1:-1]
    cos = np.sum(a * b, axis=-1) / np.maximum(np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1), 1e-12)
    bend = np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))
    return np.concatenate([[np.inf], np.percentile(bend, 95, axis=0), [np.inf]])


class _Limb(NamedTuple):
    """A leg or an arm: its joints from where it leaves the trunk, and its three articulations."""

    chain: list[int]
    upper: int  # hip or shoulder
    middle: int  # knee or elbow
    lower: int  # ankle or wrist


def _limb(tree: _Tree, base: int, end: int, height: float) -> _Limb | None:
    """The limb from ``base`` to the end joint ``end``, whose two longest consecutive bones (thigh and
    shin, upper arm and forearm) give its articulations; None when it has fewer than two bones."""
    chain = [base, *tree.path_down(base, end)]
    rest = tree.rest[chain]
    lengths = np.linalg.norm(np.diff(rest, axis=0), axis=-1)
    bends = _bends(tree.take, chain)
    # articulations: joints that bend; zero-length joints and twist helpers never count
    keep = [0] + [
        i
        for i in range(1, len(chain))
        if lengths[i - 1] >= 0.01 * height and (i == len(chain) - 1 or bends[i] >= _BEND_DEG)
    ]
    if len(keep) < 3:
        return None
    bone = np.linalg.norm(np.diff(rest[keep], axis=0), axis=-1)
    pair = int(np.argmax(bone[:-1] + bone[1:]))
    return _Limb(chain, chain[keep[pair]], chain[keep[pair + 1]], chain[keep[pair + 2]])


def _side_by_name(name: str) -> int:
    """+1 for a name that says left, -1 right, 0 neither."""
    left = bool(_LEFT.search(name.lower()) or _LEFT.search(name))
    right = bool(_RIGHT.search(name.lower()) or _RIGHT.search(name))
    return int(left) - int(right)


def _feet(tree: _Tree, height: float) -> tuple[int, int]:
    """The lowest end joint, and the lowest whose chain parts from it high above the floor."""
    rest = tree.rest
    leaves = sorted(tree.leaves, key=lambda j: rest[j, 1])
    for other in leaves[1:]:
        if rest[tree.common_ancestor(leaves[0], other), 1] - rest[other, 1] > 0.2 * height:
            return leaves[0], other
    raise ParameterError("no two legs: no two end joints near the floor part high above it")


def _hands(tree: _Tree, spine: list[int], exclude: set[int]) -> tuple[int, int]:
    """The two end joints farthest from the body's vertical axis that leave the spine by different
    joints (the arms), not counting the spine's own end (the head) and ``exclude`` (the legs)."""
    rest, on_spine = tree.rest, set(spine)
    axis = rest[spine[0], [0, 2]]

    def first_off_spine(j: int) -> int:
        path = tree.path_to_root(j)
        return next(path[i - 1] for i, k in enumerate(path) if k in on_spine)

    ends = [j for j in tree.leaves if j not in exclude and j not in on_spine]
    ends.sort(key=lambda j: -float(np.linalg.norm(rest[j, [0, 2]] - axis)))
    if ends:
        for other in ends[1:]:
            if first_off_spine(other) != first_off_spine(ends[0]):
                return ends[0], other
    raise ParameterError("no two arms: fewer than two chains branch off the spine")


def _left_first(tree: _Tree, a: _Limb, b: _Limb, height: float) -> bool:
    """Whether leg ``a`` is the left one: by ``up x forward`` where the toes point forward, else by names."""
    rest = tree.rest
    forward = np.zeros(3)
    for leg in (a, b):
        after = leg.chain[leg.chain.index(leg.lower) + 1 :]
        if after:
            forward += rest[after[0]] - rest[leg.lower]
    forward[1] = 0.0
    if np.linalg.norm(forward) > 0.03 * height:
        left = np.cross([0.0, 1.0, 0.0], forward)
        return float(np.dot(rest[a.upper] - rest[b.upper], left)) > 0
    votes = sum(_side_by_name(tree.take.names[j]) for j in a.chain[1:])
    votes -= sum(_side_by_name(tree.take.names[j]) for j in b.chain[1:])
    if votes == 0:
        raise ParameterError("cannot tell left from right: no toes point forward and no names say")
    return votes > 0


def rig_by_shape(take: SourceTake) -> SourceRig:
    """The SMPL correspondence of a humanoid skeleton found by its shape.

    Raises
    ------
    ParameterError
        Saying what the skeleton lacks: two legs, an upright spine with a head, two arms of two
        bones each, a neck, a way to tell left from right.
    """
    tree = _Tree(take)
    rest, name = tree.rest, take.names
    height = float(np.ptp(rest[:, 1])) if rest.size else 0.0
    if len(name) < 10 or height <= 0:
        raise ParameterError(f"{len(name)} joints and no height: too few for a body")
    foot_a, foot_b = _feet(tree, height)
    pelvis = tree.common_ancestor(foot_a, foot_b)
    in_legs = {j for f in (foot_a, foot_b) for j in tree.path_down(pelvis, f)}
    head_end = max((j for j in tree.leaves if j not in in_legs), key=lambda j: rest[j, 1])
    top = tree.common_ancestor(pelvis, head_end)
    spine = [top, *tree.path_down(top, head_end)]
    trunk = rest[head_end] - rest[pelvis]
    if trunk[1] < 0.7 * np.linalg.norm(trunk):
        raise ParameterError("the spine is not upright in the rest pose: not a standing body")
    hand_a, hand_b = _hands(tree, spine, in_legs)
    on_spine = set(spine)

    def branch(j: int) -> int:
        return next(k for k in tree.path_to_root(j) if k in on_spine)

    found = {end: _limb(tree, pelvis if end in (foot_a, foot_b) else branch(end), end, height)
             for end in (foot_a, foot_b, hand_a, hand_b)}  # fmt: skip
    short = [name[end] for end, limb in found.items() if limb is None]
    if short:
        raise ParameterError(f"the limbs ending at {short} have fewer than two bones")
    limbs = {end: limb for end, limb in found.items() if limb is not None}
    leg_a, leg_b, arm_a, arm_b = (limbs[e] for e in (foot_a, foot_b, hand_a, hand_b))
    a_left = _left_first(tree, leg_a, leg_b, height)
    left_side = (rest[leg_a.upper] - rest[leg_b.upper]) * (1.0 if a_left else -1.0)
    arm_a_left = float(np.dot(rest[arm_a.upper] - rest[arm_b.upper], left_side)) > 0
    sides = {
        "left": ((leg_a if a_left else leg_b), (arm_a if arm_a_left else arm_b)),
        "right": ((leg_b if a_left else leg_a), (arm_b if arm_a_left else arm_a)),
    }
    chest = max(branch(hand_a), branch(hand_b), key=spine.index)
    start = spine.index(pelvis) + 1 if pelvis in on_spine else 1
    body = spine[start : spine.index(chest) + 1] or [chest]
    above = spine[spine.index(chest) + 1 :]
    if len(above) < 2:
        raise ParameterError("no neck: the spine above the arms has fewer than two joints")
    picks: dict[str, tuple[int, ...]] = {
        "pelvis": (pelvis,),
        "spine1": (body[0],),
        "spine2": (body[len(body) // 2],) if len(body) > 2 else (body[0], body[-1]),
        "spine3": (body[-1],),
        "neck": (above[0],),
        "head": (above[1],),
    }
    for side, (leg, arm) in sides.items():
        picks |= {f"{side}_hip": (leg.upper,), f"{side}_knee": (leg.middle,), f"{side}_ankle": (leg.lower,)}
        toes = leg.chain[leg.chain.index(leg.lower) + 1 :]
        if toes:
            picks[f"{side}_foot"] = (toes[0],)
        before = arm.chain[: arm.chain.index(arm.upper)]
        picks |= {
            f"{side}_collar": (before[-1] if len(before) > 1 else chest,),
            f"{side}_shoulder": (arm.upper,),
            f"{side}_elbow": (arm.middle,),
            f"{side}_wrist": (arm.lower,),
        }
        if tree.children[arm.lower]:
            picks[f"{side}_hand"] = tuple(tree.children[arm.lower])
    positions = {smpl: tuple(name[j] for j in joints) for smpl, joints in picks.items()}
    return SourceRig(SHAPE_RIG, name[pelvis], positions, {s: n[0] for s, n in positions.items()})
