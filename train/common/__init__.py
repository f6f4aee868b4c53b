"""Shared by every command room: one-line command errors and argument types, the parallel
map (local processes or Ray).
"""
