"""Motion engines: load a model once, then run it chunk by chunk.

Engines know nothing of the service; they turn per-frame conditioning arrays
into poses. See :mod:`engines.base` for the contract every backend keeps.
"""
