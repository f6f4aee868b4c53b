"""Shared by every command room: one-line command errors and argument types (``commands``),
the parallel map, local processes or Ray (``backends``), and for every trainer the config
loader (``config``) and the run folders (``runs``).
"""
