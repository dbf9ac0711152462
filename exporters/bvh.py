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
    decimals = np.array([position_decimals] * 3 + [_ANGLE_DECIMALS] * (table.shape[1] - 3))
    body = _fixed_point_rows(table + 0.0, decimals)
    frame_time = f"{1.0 / motion.fps:.10f}"
    header = f"MOTION\nFrames: {motion.n_frames}\nFrame Time: {frame_time}\n"
    return f"{_hierarchy(rig, scale, euler_order)}{header}{body}"


def _fixed_point_rows(table: np.ndarray, decimals: np.ndarray) -> str:
    """The rows of ``table [rows, columns]`` (finite), each number as ``"%.{d}f"`` with its column's
    ``decimals`` ``d``, separated by spaces, each row ending in a newline: the text that Python's
    ``%`` formatting gives, byte for byte, written by numpy a character column at a time (formatting
    a 3-minute dance number by number cost about a tenth of a second, half the export).

    Each number is rounded to its decimals as an integer: ``rint`` of the number scaled by a power
    of ten rounds as Python does (to the nearest, of the number's exact binary value) unless the
    scaled number lies within 1e-3 of a half, where the scaling's rounding error (under 1e-5 below
    1e11) could decide it; those few, and any too large for that bound, are rounded by Python's own
    formatting. The sign is the number's own, as Python writes ``-0.0000`` for -0.00001.
    """
    powers = 10.0**decimals
    scaled = table * powers
    ints = np.rint(scaled)
    unsure = (np.abs(np.abs(scaled - np.floor(scaled)) - 0.5) < 1e-3) | (np.abs(scaled) >= 1e11)
    for row, col in zip(*np.nonzero(unsure), strict=True):
        ints[row, col] = abs(int(f"{table[row, col]:.{decimals[col]}f}".replace(".", "")))
    magnitude = np.abs(ints).astype(np.int64)
    whole, fraction = np.divmod(magnitude, 10 ** decimals.astype(np.int64))
    digits = max(1, len(str(int(whole.max(initial=0)))))
    places = int(decimals.max(initial=0))
    # A byte per place (sign, whole digits, point, decimals, separator) and number, zero where the
    # number has no character there; the zeros are dropped from the text at the end.
    chars = np.zeros((*table.shape, 1 + digits + 1 + places + 1), dtype=np.uint8)
    chars[..., 0] = np.where(table < 0, np.uint8(ord("-")), np.uint8(0))
    rest = whole
    for i in range(digits):  # least significant first; a leading zero only in the units
        tens = rest // 10  # numpy divides by a constant without a hardware division (libdivide)
        digit = (rest - 10 * tens).astype(np.uint8) + np.uint8(ord("0"))
        chars[..., digits - i] = digit if i == 0 else np.where(rest > 0, digit, np.uint8(0))
        rest = tens
    chars[..., 1 + digits] = np.where(decimals > 0, np.uint8(ord(".")), np.uint8(0))
    rest = fraction * 10 ** (places - decimals.astype(np.int64))  # decimals left-aligned in ``places``
    for i in range(places):
        tens = rest // 10
        digit = (rest - 10 * tens).astype(np.uint8) + np.uint8(ord("0"))
        place = places - 1 - i
        chars[..., 2 + digits + place] = np.where(place < decimals, digit, np.uint8(0))
        rest = tens
    chars[..., -1] = ord(" ")
    chars[:, -1, -1] = ord("\n")
    return chars.tobytes().translate(None, b"\0").decode("ascii")


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
