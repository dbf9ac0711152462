"""The follow camera: where the preview looks in each frame, so that the whole dancer stays in view.

A dance travels over the floor (a pelvis ranging over several metres in a few minutes), so a
camera that stays put loses the dancer. This one follows the root over the floor, smoothed by a
critically damped spring run forward and then backward over the excerpt: no lag, a continuous
speed, and the dancer's own sway (a salsa step back and forth) left to the dancer. Each look-at
point is then moved by at most half a pixel, to one whose picture of the floor is a whole-pixel
shift of the first frame's: the floor is drawn once, on a canvas as large as the path
(:mod:`exporters.video.backdrop`), and each frame shows a crop of it, so the grid moves under a
followed dancer and the travel still reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.signal import lfilter, lfilter_zi

from choreo.errors import ParameterError
from exporters.video.camera import LOOK_HEIGHT_M, Camera

__all__ = ["FOLLOW_HALFLIFE_S", "CameraPath", "follow_path", "spring_smooth"]

FOLLOW_HALFLIFE_S = 0.5
"""How quickly the camera takes up the dancer's travel: half of a step is taken up in this time.

Measured on six songs of 46 s to 4 min: the body stays within 1.1 m of the followed point
(within 0.9 m of the root), and the camera accelerates at most 2 m/s² where the root reaches 50.
"""


def spring_smooth(track: np.ndarray, fps: float, *, halflife_s: float = FOLLOW_HALFLIFE_S) -> np.ndarray:
    """A track followed by a critically damped spring, forward and then backward (no lag).

    The spring starts at rest on the track's first value, and the backward pass at rest on the
    forward pass's last, so a still track stays still; a straight walk is followed without lag
    once the spring has taken it up (within a second).

    Parameters
    ----------
    track : np.ndarray [shape=(T, ...)], values sampled at ``fps``
    fps : float > 0
    halflife_s : float > 0, the time in which the spring takes up half of a step

    Returns
    -------
    np.ndarray [shape=(T, ...)]

    Raises
    ------
    ParameterError
        For a non-positive ``fps`` or ``halflife_s``.
    """
    if fps <= 0 or halflife_s <= 0:
        raise ParameterError(f"fps {fps} and halflife_s {halflife_s} must be positive")
    values = np.asarray(track, dtype=np.float64)
    if len(values) < 2:
        return values.copy()
    b, a = _spring_filter(1.0 / fps, halflife_s)
    zi = lfilter_zi(b, a)

    def at_rest_from_start(x: np.ndarray) -> np.ndarray:
        start = zi.reshape(-1, *([1] * (x.ndim - 1))) * x[0]
        return lfilter(b, a, x, axis=0, zi=start)[0]

    forward = at_rest_from_start(values)
    return at_rest_from_start(forward[::-1])[::-1]


def _spring_filter(dt: float, halflife_s: float) -> tuple[np.ndarray, np.ndarray]:
    """The exact step of a critically damped spring as a two-pole filter (numerator, denominator).

    The spring (position x, speed v, goal g held over the step) moves as
    ``x' = g + e((x - g)(1 + y dt) + v dt)``, ``v' = e(v - (v + (x - g) y) y dt)`` with
    ``y = 2 ln 2 / halflife`` and ``e = exp(-y dt)``: a double pole at ``e``.
    """
    y = 2.0 * np.log(2.0) / halflife_s
    e = np.exp(-y * dt)
    a11, a12 = e * (1 + y * dt), e * dt
    b1, b2 = 1 - a11, e * y * y * dt
    numerator = np.array([b1, (a11 - 2 * e) * b1 + a12 * b2])
    return numerator, np.array([1.0, -2.0 * e, e * e])


@dataclass(frozen=True)
class CameraPath:
    """The follow camera of each frame, and how its floor is a crop of one canvas.

    Parameters
    ----------
    base : the first frame's camera; the canvas is drawn around its view
    shifts : np.ndarray [shape=(T, 2), dtype=int], each frame's whole-pixel shift (x, y) of the
        floor's picture from ``base``'s (:meth:`Camera.shift_px`)
    floor_centre : np.ndarray [shape=(2,)], the middle of the followed path (world x, z), metres
    path_radius_m : how far the followed path strays from ``floor_centre``, metres
    """

    base: Camera
    shifts: np.ndarray
    floor_centre: np.ndarray
    path_radius_m: float

    def __len__(self) -> int:
        return len(self.shifts)

    def camera(self, frame: int) -> Camera:
        """The camera of ``frame``: ``base`` moved by exactly that frame's shift."""
        offset = self.base.offset_for_shift(self.shifts[frame] - self.shifts[0])
        return self.base.looking_at(self.base.look_at + np.array([offset[0], 0.0, offset[1]]))


def follow_path(
    camera: Camera, root_xz: np.ndarray, fps: float, *, halflife_s: float = FOLLOW_HALFLIFE_S
) -> CameraPath:
    """The follow camera of every frame of an excerpt whose root moves over ``root_xz``.

    Parameters
    ----------
    camera : the view (its size, angles and scale); where it looks is replaced
    root_xz : np.ndarray [shape=(T, 2)], the root's floor position (world x, z) in each frame, metres
    fps : the frames' rate
    halflife_s : the spring's (:func:`spring_smooth`)

    Returns
    -------
    CameraPath
        Looking at :data:`~exporters.video.camera.LOOK_HEIGHT_M` above the smoothed root, each
        frame within half a pixel of it.

    Raises
    ------
    ParameterError
        For an empty or mis-shaped ``root_xz``.
    """
    root_xz = np.asarray(root_xz, dtype=np.float64)
    if root_xz.ndim != 2 or root_xz.shape[1] != 2 or len(root_xz) == 0:
        raise ParameterError(f"root_xz must be [frames, 2] with at least one frame, got {root_xz.shape}")
    smooth = spring_smooth(root_xz, fps, halflife_s=halflife_s)
    start = smooth[0]
    shifts = np.rint(camera.shift_px(smooth - start)).astype(np.int64)
    base = camera.looking_at(np.array([start[0], LOOK_HEIGHT_M, start[1]]))
    centre = (smooth.min(axis=0) + smooth.max(axis=0)) / 2
    radius = float(np.linalg.norm(smooth - centre, axis=1).max())
    return CameraPath(base=base, shifts=shifts, floor_centre=centre, path_radius_m=radius)
