"""Players of trained PPO policies and the networks they are made of.

The modules: ``planes`` (the input planes computed from a board and the ``BoardCNN`` feature
extractor), ``symmetries`` (a board's canonical image, as the symmetric policies use it),
``policies`` (the policy classes and the one place that runs a policy's actor and critic),
``architecture`` (a policy's JSON record in its checkpoint, and its checks), ``policy`` (a
checkpoint's reader and writer, the player, its batched twin, the policy as a search's
evaluator) and ``convert`` (``python -m boardgym.agents.ppo.convert OLD NEW``: an old pickled
checkpoint to today's format). The file format itself is ``agents.checkpoint``'s.

Nothing is imported here: torch and stable-baselines3 load only with the modules.
"""
