"""Command-line settings shared by the tests that run short training runs."""

NO_BAR = ("--set", "eval_bar={}", "--set", "bar_games=0")
"""Drop the hyperparameter YAML's bar: no bar opponents, so no bar games either (the config
refuses ``bar_games`` without a bar)."""
