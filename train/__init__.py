"""The ``boardgym`` command line and the work behind it, one room a job.

- ``cli``: the table of subcommands; ``common``: what they share (one-line errors, the
  parallel map).
- ``match``: ``evaluate`` and ``tournament``, over fair opening suites.
- ``quality``: labelled positions and agreement with exact solvers.
- ``ppo``: MaskablePPO training (``train``, ``selfplay``, ``tune``); ``az``: AlphaZero-style
  training; ``tools``: ``export`` and ``plot``.
- ``hyperparams``: each trainer's defaults per game, as YAML data.
"""
