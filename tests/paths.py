"""Where the tests find the checkout's files."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The repository's top folder."""
