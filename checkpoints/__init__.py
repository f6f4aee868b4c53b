"""The shipped checkpoints, installed as ``boardgym.checkpoints``: each ``NAME.zip`` here is
``shipped:NAME`` wherever a checkpoint is read (``boardgym.agents.shipped``). The model cards
``NAME.md`` beside them stay in the repository."""
