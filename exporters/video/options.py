"""``VideoOptions``: which part of the song the preview video shows, and at what size and rate."""

from __future__ import annotations

from dataclasses import dataclass

from choreo.errors import ParameterError

__all__ = ["VideoOptions"]


@dataclass(frozen=True)
class VideoOptions:
    """What part of the song, and how big.

    ``duration_s`` of None renders to the end of the song; the default is the first 30 s.

    Parameters
    ----------
    start_s : float >= 0, where the excerpt starts in the song, seconds
    duration_s : float > 0 or None, the excerpt's length, seconds
    width, height : even pixels, at least 1280x720
    fps : 1 to 60 frames per second
    encoder_threads : threads ffmpeg's H.264 encoder may use

    Raises
    ------
    ParameterError
        For a smaller or odd size, an fps out of range, or a negative start or length.
    """

    start_s: float = 0.0
    duration_s: float | None = 30.0
    width: int = 1280
    height: int = 720
    fps: int = 24
    encoder_threads: int = 1

    def __post_init__(self) -> None:
        if self.width < 1280 or self.height < 720 or self.width % 2 or self.height % 2:
            raise ParameterError(f"video size {self.width}x{self.height}: at least 1280x720, even numbers")
        if not 1 <= self.fps <= 60:
            raise ParameterError(f"video fps {self.fps} must be 1 to 60")
        if self.start_s < 0 or (self.duration_s is not None and self.duration_s <= 0):
            raise ParameterError(
                f"excerpt start {self.start_s} s, length {self.duration_s} s: must be positive"
            )
