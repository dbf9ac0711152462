"""BVH export and import of Choreo motions.

The hierarchy comes from the skeleton's rest offsets; the root has six
channels (position, then rotation) and every other joint three rotation
channels, all in one declared intrinsic Euler order (``ZXY`` by default:
``Zrotation Xrotation Yrotation``, the matrix ``Rz @ Rx @ Ry``). Angles are
written in degrees, continuous from frame to frame (no 360-degree wraps or
gimbal branch jumps), positions in metres or centimetres. End joints get an
``End Site`` so that viewers draw their bone. ``Frame Time`` is ``1 / fps``.

BVH has no place for metadata, and comments are not part of the format, so
the file carries no provenance: the JSON summary written beside it does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from choreo.contracts.choices import RIGS
from choreo.contracts.provenance import Provenance
from choreo.errors import ExportError, ParameterError
from choreo.files import write_atomically
from choreo.motion.bvh_reader import read_bvh
from choreo.motion.motion import Motion
from choreo.motion.rotations import DEFAULT_EULER_ORDER, EULER_ORDERS, euler_to_mat, mat_to_aa
from choreo.motion.skeleton import SMPL
from exporters.rigs import Rig, continuous_euler, get_rig, units_scale

__all__ = ["bvh_text", "read_bvh_motion", "write_bvh"]

_DECIMALS = 6  # hierarchy offsets
_ANGLE_DECIMALS = 4  # degrees: rounding stays under 1e-6 rad
_POSITION_DECIMALS_M = 6  # a micrometre in either unit


def _resolve_rig(rig: str | Rig, motion: Motion) -> Rig:
    return rig if isinstance(rig, Rig) else get_rig(rig, motion.skeleton)


def _hierarchy(rig: Rig, scale: float, order: str) -> str:
    rot_channels = " ".join(f"{axis}rotation" for axis in order)
    offsets = rig.rest_offsets_m(world_aligned=True) * scale
    tips = rig.tip_offsets_m(world_aligned=True) * scale
    lines = ["HIERARCHY"]

    def fmt(v: np.ndarray) -> str:
        return " ".join(f"{x:.{_DECIMALS}f}" for x in v)

    def emit(j: int, depth: int) -> None:
        pad = "\t" * depth
        if rig.parents[j] < 0:
            lines.append(f"{pad}ROOT {rig.joint_names[j]}")
            channels = f"CHANNELS 6 Xposition Yposition Zposition {rot_channels}"
        else:
            lines.append(f"{pad}JOINT {rig.joint_names[j]}")
            channels = f"CHANNELS 3 {rot_channels}"
        lines.append(f"{pad}{{")
        lines.append(f"{pad}\tOFFSET {fmt(offsets[j])}")
        lines.append(f"{pad}\t{channels}")
        children = rig.skeleton.children(j)
        for c in children:
            emit(c, depth + 1)
        if not children:
            lines.extend([f"{pad}\tEnd Site", f"{pad}\t{{", f"{pad}\t\tOFFSET {fmt(tips[j])}", f"{pad}\t}}"])
        lines.append(f"{pad}}}")

    for root in (j for j, p in enumerate(rig.parents) if p < 0):
        emit(root, 0)
    return "\n".join(lines) + "\n"


def _frame_order(rig: Rig) -> list[int]:
    """Joints in the depth-first order the hierarchy lists them (the channel order)."""
    order: list[int] = []

    def visit(j: int) -> None:
        order.append(j)
        for c in rig.skeleton.children(j):
            visit(c)

    for root in (j for j, p in enumerate(rig.parents) if p < 0):
        visit(root)
    return order


def bvh_text(
    motion: Motion,
    *,
    rig: str | Rig = "smpl",
    units: str | None = None,
    euler_order: str = DEFAULT_EULER_ORDER,
) -> str:
    """The complete BVH text of ``motion``; see :func:`write_bvh` for the parameters."""
    rig = _resolve_rig(rig, motion)
    units = rig.resolve_units(units)
    if euler_order not in EULER_ORDERS:
        raise ParameterError(f"euler_order must be one of {EULER_ORDERS}, got {euler_order!r}")
    if motion.n_frames < 1:
        raise ExportError("cannot write a BVH of a motion with no frames")
    if not (np.all(np.isfinite(motion.rotations)) and np.all(np.isfinite(motion.root_translation))):
        raise ExportError("motion holds NaN or infinite values; refusing to write the BVH")
    scale = units_scale(units)
    local = rig.local_quaternions(motion, world_aligned=True)
    degrees = np.degrees(continuous_euler(local, euler_order))  # [frames, joints, 3]
    order = _frame_order(rig)
    root = order[0]
    columns = [rig.root_positions_m(motion) * scale, degrees[:, root]]
    columns += [degrees[:, j] for j in order[1:]]
    table = np.concatenate(columns, axis=1)
    # Adding 0.0 turns -0.0 into 0.0 so that identical motions give identical text.
    position_decimals = _POSITION_DECIMALS_M - int(round(np.log10(scale)))
    row_format = " ".join([f"%.{position_decimals}f"] * 3 + [f"%.{_ANGLE_DECIMALS}f"] * (table.shape[1] - 3))
    body = "\n".join(row_format % tuple(row) for row in (table + 0.0).tolist())
    frame_time = f"{1.0 / motion.fps:.10f}"
    header = f"MOTION\nFrames: {motion.n_frames}\nFrame Time: {frame_time}\n"
    return f"{_hierarchy(rig, scale, euler_order)}{header}{body}\n"


def write_bvh(
    motion: Motion,
    path: str | Path,
    *,
    rig: str | Rig = "smpl",
    units: str | None = None,
    euler_order: str = DEFAULT_EULER_ORDER,
    provenance: Provenance | None = None,
) -> Path:
    """Write ``motion`` as a BVH file.

    Parameters
    ----------
    motion : the dance; frame ``k`` is shown at ``k / fps`` seconds
    path : the ``.bvh`` file to write (replaced atomically)
    rig : ``"smpl"``, ``"mixamo"`` or a :class:`~exporters.rigs.Rig`: the joint
        names and default units (BVH joints always keep world-aligned axes)
    units : ``"m"`` or ``"cm"``; ``None`` takes the rig's default (m for smpl, cm for mixamo)
    euler_order : intrinsic Euler order of every joint's rotation channels
    provenance : accepted so that every exporter has the same signature; BVH has
        no metadata slot, so it is not written into the file (the JSON summary
        beside the BVH carries it)

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    ParameterError
        For an unknown rig, units or Euler order.
    ExportError
        When the motion has no frames or non-finite values, or the file cannot be written.
    """
    if provenance is not None and not isinstance(provenance, Provenance):
        raise ParameterError(f"provenance must be a Provenance, got {type(provenance).__name__}")
    path = Path(path)
    text = bvh_text(motion, rig=rig, units=units, euler_order=euler_order)
    write_atomically(path, text.encode("ascii"), what="BVH file", error=ExportError)
    return path


def _infer_scale(offsets: np.ndarray, reference_m: np.ndarray, path: Path) -> float:
    """File units per metre, from the file's bone lengths against the skeleton's."""
    ref = np.linalg.norm(reference_m, axis=1)
    got = np.linalg.norm(offsets, axis=1)
    mask = ref > 1e-6
    ratio = float(np.median(got[mask] / ref[mask]))
    for scale in (1.0, 100.0):
        if abs(ratio / scale - 1.0) < 0.02:
            return scale
    raise ParameterError(
        f"BVH file {path}: bone lengths are {ratio:.4g} times Choreo's, neither metres nor centimetres"
    )


def read_bvh_motion(path: str | Path) -> Motion:
    """Read a BVH written by :func:`write_bvh` (either rig, either units) back into a Motion.

    Joints are matched by name (SMPL or Mixamo names), units are recognised
    from the bone lengths, and each joint's Euler order is taken from its
    channel line, so the file need not use the default order.

    Raises
    ------
    ParameterError
        When the file cannot be parsed, lacks a joint, or its skeleton is not Choreo's.
    """
    path = Path(path)
    data = read_bvh(path)
    skeleton = SMPL
    rig_names = {name: get_rig(name, skeleton).joint_names for name in RIGS}
    rig = next((r for r, names in rig_names.items() if set(names) <= set(data.names)), None)
    if rig is None:
        raise ParameterError(f"BVH file {path}: joint names match neither the smpl nor the mixamo rig")
    names = rig_names[rig]
    index = [data.index(n) for n in names]
    for j, p in enumerate(skeleton.parents):
        if p >= 0 and data.parents[index[j]] != index[p]:
            raise ParameterError(f"BVH file {path}: joint {names[j]!r} does not hang from {names[p]!r}")
    scale = _infer_scale(data.offsets[index], skeleton.offsets, path)
    starts = data.channel_start()
    n = data.n_frames
    mats = np.empty((n, skeleton.n_joints, 3, 3))
    root_m = np.zeros((n, 3))
    for j, k in enumerate(index):
        chans = data.channels[k]
        rot = [i for i, c in enumerate(chans) if c.endswith("rotation")]
        if len(rot) != 3:
            raise ParameterError(
                f"BVH file {path}: joint {names[j]!r} has {len(rot)} rotation channels, not 3"
            )
        order = "".join(chans[i][0] for i in rot)
        cols = starts[k] + np.array(rot)
        mats[:, j] = euler_to_mat(np.radians(data.frames[:, cols]), order)
        if skeleton.parents[j] < 0:
            root_m[:] = data.offsets[k]
            for axis, name in enumerate(("Xposition", "Yposition", "Zposition")):
                if name in chans:
                    root_m[:, axis] = data.frames[:, starts[k] + chans.index(name)]
            root_m /= scale
    fps = data.fps
    if abs(fps - round(fps)) < 1e-4 * fps:
        fps = float(round(fps))
    return Motion(fps=fps, root_translation=root_m, rotations=mat_to_aa(mats), skeleton=skeleton)
