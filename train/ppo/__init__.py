"""MaskablePPO training: the config as data (``config``), run folders and checkpoints
(``runs``), the training envs and opponent pool (``environments``), evaluations between
rollouts (``callbacks``), kickstarting (``teacher``), supervised pretraining (``pretrain``),
the ``train`` command (``trainer``), the league (``selfplay``) and Ray Tune sweeps (``tune``).
"""
