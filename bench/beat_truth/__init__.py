"""The beat-truth set: songs whose beats are known by construction, built into a cache (see README.md)."""
