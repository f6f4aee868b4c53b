"""Scripts: evaluation, training, self-play, tournaments and the ``boardgym`` command line."""
