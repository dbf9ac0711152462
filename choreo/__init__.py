"""Choreo: turn songs into full-length, beat-synchronous 3D dance animations."""

__version__ = "0.1.0"
