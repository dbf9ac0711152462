"""Read BVH motion files of any skeleton.

A BVH file is a ``HIERARCHY`` section (a joint tree with rest offsets and the
channels each joint animates) followed by a ``MOTION`` section (frame count,
frame time, one row of numbers per frame). This reader keeps the data as the
file states it (units, axis order, Euler orders per joint) so that callers can
decide what it means; :func:`forward_kinematics` turns it into world positions
and orientations.

Real files are not always consistent: some headers state one frame fewer than
the rows that follow (assimp's ``Boxing_Toes.bvh``). The rows are the data, so
the reader trusts the rows and reports the mismatch in ``declared_frames``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from choreo.errors import ParameterError
from choreo.motion.rotations import euler_to_mat

__all__ = ["BvhData", "forward_kinematics", "read_bvh"]

_ROTATION_CHANNELS = ("Xrotation", "Yrotation", "Zrotation")
_POSITION_CHANNELS = ("Xposition", "Yposition", "Zposition")


@dataclass(frozen=True)
class BvhData:
    """The content of one BVH file.

    Parameters
    ----------
    names : tuple of str, one per joint (End Sites are not joints)
    parents : tuple of int, parent index per joint, ``-1`` for the root
    offsets : np.ndarray [shape=(joints, 3)], rest offset from the parent, file units
    channels : tuple of tuple of str, the channel names of each joint in file order
    frames : np.ndarray [shape=(frames, channels)], every channel value, degrees for
        rotations and file units for positions
    frame_time_s : float, seconds between frames
    end_sites : np.ndarray [shape=(joints, 3)], offset of the joint's End Site
        (zeros where the joint has none), file units
    declared_frames : int, the ``Frames:`` count of the header
    """

    names: tuple[str, ...]
    parents: tuple[int, ...]
    offsets: np.ndarray
    channels: tuple[tuple[str, ...], ...]
    frames: np.ndarray
    frame_time_s: float
    end_sites: np.ndarray
    declared_frames: int

    @property
    def n_frames(self) -> int:
        return int(self.frames.shape[0])

    @property
    def fps(self) -> float:
        return 1.0 / self.frame_time_s

    def index(self, name: str) -> int:
        """Index of the joint called ``name``."""
        try:
            return self.names.index(name)
        except ValueError:
            raise ParameterError(f"BVH has no joint called {name!r}") from None

    def channel_start(self) -> np.ndarray:
        """Column of ``frames`` where each joint's channels begin, ``[joints]``."""
        counts = np.array([len(c) for c in self.channels], dtype=int)
        return np.concatenate([[0], np.cumsum(counts)[:-1]])


def _tokens(text: str) -> list[str]:
    return text.replace("{", " { ").replace("}", " } ").split()


def read_bvh(path: str | Path) -> BvhData:
    """Parse the BVH file at ``path``.

    Parameters
    ----------
    path : path of a ``.bvh`` file

    Returns
    -------
    BvhData

    Raises
    ------
    ParameterError
        When the file is missing or its structure is broken; the message names
        the file and what is wrong.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ParameterError(f"cannot read BVH file {path}: {exc}") from None
    head, sep, body = text.partition("MOTION")
    if not sep:
        raise ParameterError(f"BVH file {path} has no MOTION section")
    try:
        names, parents, offsets, channels, end_sites = _parse_hierarchy(_tokens(head))
    except (IndexError, ValueError) as exc:
        raise ParameterError(f"BVH file {path} has a malformed HIERARCHY: {exc}") from None
    declared, frame_time_s, frames = _parse_motion(body, path)
    n_channels = sum(len(c) for c in channels)
    if frames.shape[1] != n_channels:
        raise ParameterError(
            f"BVH file {path}: frame rows have {frames.shape[1]} values, the hierarchy declares {n_channels}"
        )
    if abs(frames.shape[0] - declared) > 1:
        raise ParameterError(
            f"BVH file {path}: header says {declared} frames but {frames.shape[0]} rows follow"
        )
    return BvhData(
        names=tuple(names),
        parents=tuple(parents),
        offsets=np.array(offsets, dtype=np.float64).reshape(-1, 3),
        channels=tuple(tuple(c) for c in channels),
        frames=frames,
        frame_time_s=frame_time_s,
        end_sites=np.array(end_sites, dtype=np.float64).reshape(-1, 3),
        declared_frames=declared,
    )


def _parse_hierarchy(
    tok: list[str],
) -> tuple[list[str], list[int], list[list[float]], list[list[str]], list[list[float]]]:
    names: list[str] = []
    parents: list[int] = []
    offsets: list[list[float]] = []
    channels: list[list[str]] = []
    end_sites: list[list[float]] = []
    stack: list[int] = []  # joint index per open brace; -2 marks an End Site block
    i = 0
    if not tok or tok[0] != "HIERARCHY":
        raise ValueError("missing HIERARCHY keyword")
    i = 1
    pending_end = False
    while i < len(tok):
        t = tok[i]
        if t in ("ROOT", "JOINT"):
            parent = next((s for s in reversed(stack) if s >= 0), -1)
            if t == "JOINT" and parent < 0:
                raise ValueError(f"JOINT {tok[i + 1]} outside any ROOT")
            names.append(tok[i + 1])
            parents.append(parent)
            offsets.append([0.0, 0.0, 0.0])
            channels.append([])
            end_sites.append([0.0, 0.0, 0.0])
            i += 2
        elif t == "End":
            pending_end = True
            i += 2  # "End Site"
        elif t == "{":
            stack.append(-2 if pending_end else len(names) - 1)
            pending_end = False
            i += 1
        elif t == "}":
            stack.pop()
            i += 1
        elif t == "OFFSET":
            values = [float(v) for v in tok[i + 1 : i + 4]]
            if stack and stack[-1] == -2:
                owner = next(s for s in reversed(stack) if s >= 0)
                end_sites[owner] = values
            else:
                offsets[stack[-1]] = values
            i += 4
        elif t == "CHANNELS":
            count = int(tok[i + 1])
            names_ch = tok[i + 2 : i + 2 + count]
            for c in names_ch:
                if c not in _ROTATION_CHANNELS + _POSITION_CHANNELS:
                    raise ValueError(f"unknown channel {c!r} on joint {names[stack[-1]]!r}")
            channels[stack[-1]] = names_ch
            i += 2 + count
        else:
            raise ValueError(f"unexpected token {t!r}")
    if not names:
        raise ValueError("no joints")
    if stack:
        raise ValueError("unbalanced braces")
    return names, parents, offsets, channels, end_sites


def _parse_motion(body: str, path: Path) -> tuple[int, float, np.ndarray]:
    lines = body.strip().splitlines()
    declared = None
    frame_time_s = None
    k = 0
    while k < len(lines) and (declared is None or frame_time_s is None):
        line = lines[k].strip()
        if line.startswith("Frames:"):
            declared = int(line.split(":", 1)[1])
        elif line.startswith("Frame Time:"):
            frame_time_s = float(line.split(":", 1)[1])
        elif line:
            break
        k += 1
    if declared is None or frame_time_s is None:
        raise ParameterError(f"BVH file {path}: MOTION lacks 'Frames:' or 'Frame Time:'")
    if not np.isfinite(frame_time_s) or frame_time_s <= 0:
        raise ParameterError(f"BVH file {path}: frame time must be positive, got {frame_time_s}")
    rows = [ln.split() for ln in lines[k:] if ln.strip()]
    if not rows:
        return declared, frame_time_s, np.zeros((0, 0))
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise ParameterError(f"BVH file {path}: frame rows differ in length")
    try:
        frames = np.array(rows, dtype=np.float64)
    except ValueError as exc:
        raise ParameterError(f"BVH file {path}: non-numeric frame value: {exc}") from None
    return declared, frame_time_s, frames


def forward_kinematics(bvh: BvhData) -> tuple[np.ndarray, np.ndarray]:
    """World positions and orientations of every joint in every frame.

    Rotation channels compose in the order they are listed (intrinsic Euler,
    ``Zrotation Xrotation Yrotation`` is ``Rz @ Rx @ Ry``); position channels
    replace the joint's offset.

    Returns
    -------
    positions : np.ndarray [shape=(frames, joints, 3)], file units
    rotations : np.ndarray [shape=(frames, joints, 3, 3)], world rotation matrices
    """
    n_frames = bvh.n_frames
    n_joints = len(bvh.names)
    starts = bvh.channel_start()
    positions = np.zeros((n_frames, n_joints, 3))
    world = np.zeros((n_frames, n_joints, 3, 3))
    for j in range(n_joints):
        chans = bvh.channels[j]
        cols = bvh.frames[:, starts[j] : starts[j] + len(chans)]
        local_pos = np.broadcast_to(bvh.offsets[j], (n_frames, 3)).copy()
        rot_axes = "".join(c[0] for c in chans if c in _ROTATION_CHANNELS)
        rot_cols = [i for i, c in enumerate(chans) if c in _ROTATION_CHANNELS]
        for i, c in enumerate(chans):
            if c in _POSITION_CHANNELS:
                local_pos[:, _POSITION_CHANNELS.index(c)] = cols[:, i]
        if len(rot_axes) == 3 and len(set(rot_axes)) == 3:
            local_rot = euler_to_mat(np.radians(cols[:, rot_cols]), rot_axes)
        else:
            local_rot = np.broadcast_to(np.eye(3), (n_frames, 3, 3)).copy()
            for i in rot_cols:
                local_rot = local_rot @ euler_to_mat(
                    np.radians(np.stack([cols[:, i], np.zeros(n_frames), np.zeros(n_frames)], axis=1)),
                    chans[i][0] + "".join(a for a in "XYZ" if a != chans[i][0]),
                )
        p = bvh.parents[j]
        if p < 0:
            positions[:, j] = local_pos
            world[:, j] = local_rot
        else:
            positions[:, j] = positions[:, p] + np.einsum("fab,fb->fa", world[:, p], local_pos)
            world[:, j] = world[:, p] @ local_rot
    return positions, world
