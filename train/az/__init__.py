"""AlphaZero-style training: search-guided self-play, the replay buffer, the learner and the
``az`` command.
"""
