"""Matches between players: ``evaluate`` (A against B, Wilson intervals), ``tournament``
(round robins with Elo) and the fair opening suites both draw from (``openings``).
"""
