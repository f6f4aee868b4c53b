"""Play quality: labelled sets of positions with exact move values (``positions``, ``moves``),
agreement of any player with them (``agreement``, the ``quality`` command) and its record,
table and chart (``report``).
"""
