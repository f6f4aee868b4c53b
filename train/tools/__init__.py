"""Tools over finished runs and checkpoints: ONNX ``export`` and learning-curve ``plot``.
"""
