"""What the engines need to run the dance network from its file.

Its architecture (:mod:`.config`), the torch module (:mod:`.dance_net`, for the
torch backends; needs torch) and the reading of both from an exported ONNX file
(:mod:`.file`). The training code (:mod:`choreo.model`) builds on these, so the
network a backend runs is the one that was trained.
"""
