"""Tools above the engines: precision conversions calibrated on real songs, and the selfcheck.

The engines (``engines/``) know nothing of songs, audio or the pipeline. These
tools do: they analyse songs into the model's inputs, calibrate the int8
conversion on them (:mod:`.precision_files`, :mod:`.calibration`), and compare
every backend with ONNX Runtime fp32 on real songs (:mod:`.selfcheck`). They run
offline, from ``choreo engines build|selfcheck`` and the benchmarks; a worker
only loads what they made.
"""
