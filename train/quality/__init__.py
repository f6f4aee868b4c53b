"""Play quality: labelled sets of positions with exact move values (``positions``, ``moves``)
and agreement of any player with them (``agreement``, the ``quality`` command).
"""
