"""Converting a policy checkpoint of the old pickled format (boardgym before format 2: an
SB3 ``model.save`` zip with a ``boardgym.json`` of version 1) to today's, without unpickling
anything: ``python -m boardgym.agents.ppo.convert OLD NEW``.

The architecture comes from the readable text stable-baselines3 wrote beside each pickled
class in the ``data`` entry (the pickles themselves are never read), checked against the
allow-lists; the weights and optimizer state are read as plain tensors.
"""

from __future__ import annotations

import argparse
import inspect
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from boardgym.agents.checkpoint import (
    FORMAT_VERSION,
    METADATA_ENTRY,
    OPTIMIZER_ENTRY,
    PICKLED_ENTRY,
    PICKLED_FORMAT,
    POLICY_ENTRY,
    TRAIN_STATE_ENTRY,
    CheckpointError,
    checkpoint_metadata,
    load_state,
    read_entry,
    read_tensors,
)
from boardgym.agents.ppo.architecture import HEADS
from boardgym.agents.ppo.policies import POLICIES
from boardgym.agents.ppo.policy import build_policy, write_checkpoint
from boardgym.envs.games.core import one_line

CLASS_NAME = re.compile(r"<class '(?:[\w.]+\.)?(\w+)'>")
"""The class name in the text stable-baselines3 writes beside a pickled class."""
METHOD_OWNER = re.compile(r"<function (\w+)\.__init__ ")
"""A policy class's name, read off the text of its ``__init__`` in the same record."""
SERIALIZED = ":serialized:"


def _readable_class(value: Any, pattern: re.Pattern[str], what: str, old: Path) -> str:
    """The class name stable-baselines3 wrote as readable text beside a pickled class (the
    pickle itself, under ``:serialized:``, is never read).

    Raises:
        CheckpointError: no such text.
    """
    texts = [value] if isinstance(value, str) else \
        [text for key, text in value.items() if key != SERIALIZED and isinstance(text, str)] \
        if isinstance(value, dict) else []
    for text in texts:
        found = pattern.search(text)
        if found:
            return found.group(1)
    raise CheckpointError(f"{old}: its {what} is not named in readable form; not an old "
                          "boardgym checkpoint")


def _signature_default(cls: type, name: str) -> Any:
    """The default of the constructor argument ``name`` of ``cls``, or of the first base
    class that names it (a subclass may pass it on through ``**kwargs``): what SB3 used when
    the run did not set it."""
    for klass in cls.__mro__:
        parameter = inspect.signature(klass).parameters.get(name)
        if parameter is not None:
            return parameter.default
    raise CheckpointError(f"{cls.__name__} takes no {name}")


def _old_architecture(data: dict[str, Any], old: Path) -> dict[str, Any]:
    """The architecture record of an old (format 1) checkpoint, from the readable parts of
    its ``data`` entry: class names as text, sizes as JSON."""
    kwargs = data.get("policy_kwargs")
    if not isinstance(kwargs, dict):
        raise CheckpointError(f"{old}: no readable policy_kwargs; not an old boardgym checkpoint")
    policy_name = _readable_class(data.get("policy_class"), METHOD_OWNER, "policy class", old)
    policy_class = POLICIES.get(policy_name)
    activation = kwargs.get("activation_fn")
    net_arch = kwargs.get("net_arch", {})  # a list: the same layers for both heads
    return {
        "class": policy_name,
        "features_extractor": _readable_class(kwargs.get("features_extractor_class"),
                                              CLASS_NAME, "feature extractor", old),
        "features_extractor_kwargs": kwargs.get("features_extractor_kwargs", {}),
        "net_arch": {head: net_arch for head in HEADS} if isinstance(net_arch, list)
        else net_arch,
        "activation": _readable_class(activation, CLASS_NAME, "activation", old)
        if activation is not None or policy_class is None
        else _signature_default(policy_class, "activation_fn").__name__,
        "share_features_extractor": kwargs.get(
            "share_features_extractor",
            policy_class is None or _signature_default(policy_class, "share_features_extractor")),
    }


def _old_counters(data: dict[str, Any]) -> dict[str, Any]:
    """``--resume``'s counters from the readable parts of an old ``data`` entry (the recent
    episodes' buffer is pickled there, so it starts empty)."""
    return {"n_updates": int(data.get("_n_updates", 0)),
            "episode_num": int(data.get("_episode_num", 0)), "ep_info_buffer": []}


def convert(old: str | Path, new: str | Path) -> dict[str, Any]:
    """Convert a checkpoint of the pickled format (boardgym before format 2) to this one
    without unpickling anything: the architecture from the readable text of its ``data``
    entry (checked against the allow-lists), the weights and optimizer state read with
    ``torch.load(weights_only=True)`` and loaded key for key.

    Returns:
        The new file's ``boardgym.json`` record.

    Raises:
        FileNotFoundError: no file at ``old``.
        CheckpointError: ``old`` is not an old boardgym checkpoint, or its weights do not fit
            its architecture.
    """
    old = Path(old)
    record = read_entry(old, METADATA_ENTRY)
    if record is None:
        raise CheckpointError(f"{old} is not a boardgym checkpoint (no {METADATA_ENTRY})")
    if record.get("format_version") == FORMAT_VERSION:
        raise CheckpointError(f"{old} is already in format {FORMAT_VERSION}; nothing to convert")
    data = read_entry(old, PICKLED_ENTRY)
    if data is None:
        raise CheckpointError(f"{old} has no {PICKLED_ENTRY} entry; not an old boardgym "
                              "checkpoint")
    game, env_kwargs = str(record.get("game")), record.get("env_kwargs", {})
    steps = int(data.get("num_timesteps", record.get("num_timesteps", 0)))
    metadata = checkpoint_metadata(game, env_kwargs, steps, _old_architecture(data, old))
    policy = build_policy(metadata, old)
    load_state(policy, read_tensors(old, POLICY_ENTRY), old, POLICY_ENTRY)
    load_state(policy.optimizer, read_tensors(old, OPTIMIZER_ENTRY), old, OPTIMIZER_ENTRY)
    train_state = read_entry(old, TRAIN_STATE_ENTRY)
    entries = {} if train_state is None else {
        TRAIN_STATE_ENTRY: {**train_state, "counters": _old_counters(data)}}
    return write_checkpoint(new, policy, game, env_kwargs, steps, entries)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m boardgym.agents.ppo.convert OLD NEW``: returns the exit code (a bad
    argument or an unusable ``OLD`` exits with code 2 and a one-line message)."""
    parser = argparse.ArgumentParser(
        prog="python -m boardgym.agents.ppo.convert",
        description="Convert a boardgym checkpoint of the old pickled format "
                    f"(format {PICKLED_FORMAT}) to the pickle-free format {FORMAT_VERSION}, "
                    "without unpickling it: the architecture from its readable record, the "
                    "weights as plain tensors.")
    parser.add_argument("old", type=Path, help="the old checkpoint")
    parser.add_argument("new", type=Path, help="where to write the new one (may be OLD)")
    args = parser.parse_args(argv)
    try:
        metadata = convert(args.old, args.new)
    except (ValueError, OSError) as error:
        parser.error(one_line(str(error)))
    print(f"{args.new}: {metadata['game']} checkpoint, format {FORMAT_VERSION}, "
          f"{metadata['num_timesteps']} steps; plays as {args.old}: the same weights, "
          "read as plain tensors")
    return 0


__all__ = ["convert", "main"]

if __name__ == "__main__":
    raise SystemExit(main())
