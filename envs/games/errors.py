"""Errors raised by the rules core."""


class IllegalMoveError(ValueError):
    """A move that the rules do not allow in the given position."""
