"""The video's fixed camera: an orthographic three-quarter view of the dance floor.

Orthographic, so that a capsule's outline is exactly a stadium and its depth and normal follow in
closed form (:mod:`exporters.video.painter`). The bottom :data:`STRIP_PX` rows of the picture are
the beat strip; the camera frames the floor above them.
"""

from __future__ import annotations

import numpy as np

__all__ = ["STRIP_PX", "Camera"]

STRIP_PX = 34
"""Height of the beat strip along the bottom of the picture, pixels."""


class Camera:
    """An orthographic three-quarter view: world metres to pixels and camera-space depth."""

    def __init__(self, width: int, height: int, *, yaw_deg: float = 28.0, pitch_deg: float = 14.0) -> None:
        yaw, pitch = np.radians(yaw_deg), np.radians(pitch_deg)
        self.floor_squash = float(np.sin(pitch))  # how much shorter the floor looks than it is wide
        turn = np.array([[np.cos(yaw), 0, -np.sin(yaw)], [0, 1, 0], [np.sin(yaw), 0, np.cos(yaw)]])
        tilt = np.array([[1, 0, 0], [0, np.cos(pitch), -np.sin(pitch)], [0, np.sin(pitch), np.cos(pitch)]])
        self.rotation = tilt @ turn  # world -> camera (x right, y up, z towards the viewer)
        self.scale = (height - STRIP_PX) / 3.2  # pixels per metre: a 1.7 m figure fills half the height
        self.centre = np.array([width / 2, (height - STRIP_PX) * 0.5])
        self.look_at = np.array([0.0, 1.0, 0.0])
        self.width, self.height = width, height

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
