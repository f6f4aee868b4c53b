"""TD learning of n-tuple networks by self-play (``boardgym td``), one job a module:

- ``config``: ``TdConfig``, the hyperparameters as data, each key documented under its
  field, and their checks (loaded by ``train.common.config.load_config``).
- ``kernels``: each game's compiled self-play, one chunk of games a call.
- ``run``: ``TdRun``, the run folder (``train.common.runs``), resuming, the schedules, the
  loop and its checkpoints.
- ``evaluation``: the in-run evaluations (selection positions, the ladder, the noisy
  ladder) and the selection key of ``best.zip``.
- ``command``: the ``boardgym td`` parser and ``main``.
"""
