"""The ``--device`` option of the trainers (``boardgym train``, ``selfplay``, ``az``): the
config key ``device``, whose forms and resolution are ``agents.devices``'."""

from __future__ import annotations

import argparse

from boardgym.agents.devices import check_device


def device_option(text: str) -> str:
    """The argparse ``type`` of ``--device``: a well-formed device (``check_device``)."""
    try:
        return check_device(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_device_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--device auto|cpu|cuda|cuda:N`` (the config key ``device``) to a trainer's
    parser."""
    parser.add_argument("--device", type=device_option, metavar="auto|cpu|cuda|cuda:N",
                        help="where torch trains (config key device, default auto: a CUDA "
                             "GPU when torch sees one, else the CPU); a resumed run may "
                             "change it")


__all__ = ["add_device_option", "device_option"]
