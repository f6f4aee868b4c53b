"""Command-line settings shared by the tests that run short training runs."""

NO_BAR = ("--set", "eval_bar={}", "--set", "bar_games=0")
"""Drop the hyperparameter YAML's bar: no bar opponents, so no bar games either (the config
refuses ``bar_games`` without a bar)."""

TINY_RUN = ("--no-progress", "--set", "n_envs=4", "--set", "n_steps=64", "--set",
            "batch_size=64", "--set", "n_epochs=1", "--set", "channels=8", "--set", "blocks=1",
            "--set", "features_dim=32", "--set", "net_arch=[16]", "--set", "eval_games=4",
            "--set", "eval_opponents=[random]", "--set", "opponents=[random]", *NO_BAR,
            "--set", "init_from=null", "--set", "pretrain_positions=null",
            "--set", "opponent_weights=null")
"""A run of a few seconds from random weights against ``random`` alone: a tiny tower, one
epoch of 256-step rollouts, 4-game evaluations, no bar, no start network."""
