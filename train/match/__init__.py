"""Matches between players: ``evaluate`` (A against B), ``tournament`` (round robins, rated
by ``elo``), the fair opening suites both draw from (``openings``) and what a match comes to
(``results``: outcomes, pair scores, Wilson intervals).
"""
