"""AlphaZero-style training by search-guided self-play (``boardgym az``), one job a module:

- ``config``: ``AzConfig``, the hyperparameters as data, each key documented under its
  field, and their checks (loaded by ``train.common.config.load_config``).
- ``selfplay``: an iteration's self-play games, played at once by the batched search, and
  the ``Samples`` they leave (policy and value targets).
- ``replay``: ``ReplayBuffer``, the newest samples in a ring, saved for ``--resume``.
- ``learn``: the learner: start weights (``init_from``, grown when smaller), the optimizer
  and its learning-rate schedule, the losses and the training steps.
- ``run``: ``AzRun``, the run folder (``train.common.runs``), resuming, the logs, the
  training loop and the in-run evaluations.
- ``command``: the ``boardgym az`` parser and ``main``.
"""
