"""The video's camera: an orthographic three-quarter view of the dance floor, looking at a point.

Orthographic, so that a capsule's outline is exactly a stadium and its depth and normal follow in
closed form (:mod:`exporters.video.painter`), and so that moving the camera over the floor moves
the floor's picture by a plain shift: a camera that follows the dancer
(:mod:`exporters.video.follow`) shows the floor as a crop of one larger picture, drawn once.
The bottom :data:`STRIP_PX` rows of the picture are the beat strip; the camera frames the floor
above them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

__all__ = ["LOOK_HEIGHT_M", "STRIP_PX", "Camera"]

STRIP_PX = 34
"""Height of the beat strip along the bottom of the picture, pixels."""

LOOK_HEIGHT_M = 1.0
"""Height above the floor of the point the camera looks at, metres (a figure's middle)."""


@dataclass(frozen=True)
class Camera:
    """An orthographic view: world metres to pixels and camera-space depth.

    Build one with :meth:`three_quarter`; :meth:`looking_at` moves it over the floor and
    :meth:`padded` widens its picture (the follow camera's floor canvas).

    Parameters
    ----------
    width, height : the picture's size, pixels (``height`` includes the beat strip)
    rotation : np.ndarray [shape=(3, 3)], world to camera (x right, y up, z towards the viewer)
    scale : pixels per metre
    centre : np.ndarray [shape=(2,)], the pixel (x, y) where ``look_at`` is seen
    look_at : np.ndarray [shape=(3,)], world metres
    floor_squash : how much shorter the floor looks than it is wide (the sine of the pitch)
    """

    width: int
    height: int
    rotation: np.ndarray
    scale: float
    centre: np.ndarray
    look_at: np.ndarray
    floor_squash: float

    @classmethod
    def three_quarter(
        cls, width: int, height: int, *, yaw_deg: float = 28.0, pitch_deg: float = 14.0
    ) -> Camera:
        """The preview's view of a ``width`` x ``height`` picture, looking at the floor's middle.

        A 1.7 m figure fills half the height above the strip.
        """
        yaw, pitch = np.radians(yaw_deg), np.radians(pitch_deg)
        turn = np.array([[np.cos(yaw), 0, -np.sin(yaw)], [0, 1, 0], [np.sin(yaw), 0, np.cos(yaw)]])
        tilt = np.array([[1, 0, 0], [0, np.cos(pitch), -np.sin(pitch)], [0, np.sin(pitch), np.cos(pitch)]])
        return cls(
            width=width,
            height=height,
            rotation=tilt @ turn,
            scale=(height - STRIP_PX) / 3.2,
            centre=np.array([width / 2, (height - STRIP_PX) * 0.5]),
            look_at=np.array([0.0, LOOK_HEIGHT_M, 0.0]),
            floor_squash=float(np.sin(pitch)),
        )

    @property
    def picture_height(self) -> int:
        """Rows above the beat strip: the part of the picture that shows the floor and the dancer."""
        return self.height - STRIP_PX

    def looking_at(self, point: np.ndarray) -> Camera:
        """The same view moved to look at ``point`` (world metres)."""
        return replace(self, look_at=np.asarray(point, dtype=np.float64))

    def padded(self, left: int, top: int, right: int, bottom: int) -> Camera:
        """The same view with its picture grown by these many pixels on each side."""
        return replace(
            self,
            width=self.width + left + right,
            height=self.height + top + bottom,
            centre=self.centre + np.array([left, top]),
        )

    def shift_px(self, offset: np.ndarray) -> np.ndarray:
        """How far (pixel x, y) the floor's picture moves when the camera moves by ``offset``.

        Parameters
        ----------
        offset : np.ndarray [shape=(..., 2)], a move over the floor (world x, z), metres

        Returns
        -------
        np.ndarray [shape=(..., 2)]
            Pixels; the picture of every point moves by minus this much.
        """
        move = np.stack([offset[..., 0], np.zeros_like(offset[..., 0]), offset[..., 1]], axis=-1)
        cam = move @ self.rotation.T
        return np.stack([self.scale * cam[..., 0], -self.scale * cam[..., 1]], axis=-1)

    def offset_for_shift(self, shift_px: np.ndarray) -> np.ndarray:
        """The move over the floor (world x, z, metres) whose picture shift is ``shift_px``: the
        inverse of :meth:`shift_px`."""
        basis = self.shift_px(np.eye(2))  # rows: the shifts of a metre along x and along z
        return np.asarray(shift_px, dtype=np.float64) @ np.linalg.inv(basis)

    def project(self, points: np.ndarray) -> np.ndarray:
        """World points ``[..., 3]`` to pixel x, pixel y (down) and depth in metres (nearer is larger)."""
        cam = (points - self.look_at) @ self.rotation.T
        return np.stack(
            [
                self.centre[0] + self.scale * cam[..., 0],
                self.centre[1] - self.scale * cam[..., 1],
                cam[..., 2],
            ],
            axis=-1,
        )

    def floor_points(self) -> np.ndarray:
        """The world point on the floor (y = 0) seen at each pixel, ``[H, W, 3]`` (far away near the top)."""
        ys, xs = np.mgrid[0 : self.height, 0 : self.width].astype(np.float64)
        cam_x = (xs - self.centre[0]) / self.scale
        cam_y = (self.centre[1] - ys) / self.scale
        inverse = self.rotation.T  # camera -> world
        # A world point is look_at + inverse @ (cam_x, cam_y, z); choose z so that its y is 0.
        world_y0 = self.look_at[1] + inverse[1, 0] * cam_x + inverse[1, 1] * cam_y
        z = -world_y0 / inverse[1, 2]
        cam = np.stack([cam_x, cam_y, z], axis=-1)
        return self.look_at + cam @ inverse.T
