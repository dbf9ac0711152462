"""The dance model: config, ONNX graph and export (numpy only); torch training in submodules.

Only :mod:`engines.network.dance_net`, :mod:`choreo.model.losses` and
:mod:`choreo.model.training` import torch (the ``train`` extra).
"""
