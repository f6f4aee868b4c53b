"""The commands of the ``boardgym`` command line (``train.cli``) and their machinery.

- ``evaluate``: A against B in simulated matches; ``tournament``: round robins with Elo.
- ``play``: a person against any agent; its game flow is ``play_flow``, the terminal
  ``play_terminal``, the pygame window ``play_window``.
- ``ppo`` (``boardgym train``) and ``selfplay``: MaskablePPO training, built from ``config``
  (hyperparameters as data), ``runs`` (run folders, atomic writes, checkpoints, RNG streams),
  ``environments`` (the opponent pool and the vector env) and ``callbacks`` (evaluation and
  checkpoints between rollouts); ``plot`` draws a run's learning curves.
"""
