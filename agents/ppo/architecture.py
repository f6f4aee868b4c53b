"""The architecture record of a policy checkpoint (``boardgym.json``'s ``policy``): what a
PPO policy is, in JSON, and its checks.

A record names the policy class, feature extractor and activation by class name, each from
an allow-list of ``agents.ppo.policies`` (``POLICIES``, ``EXTRACTORS``, ``ACTIVATIONS``),
with the extractor's keyword arguments, ``net_arch`` and ``share_features_extractor``; an
``EnsemblePolicy`` adds its ``members``, a ``TowerPolicy`` has only the az tower's sizes.
``architecture_of`` writes the record of a policy, ``policy_arguments`` reads one back as
the class and keyword arguments to build, refusing anything off the allow-lists or out of
range with a one-line ``CheckpointError``.
"""

from __future__ import annotations

import inspect
from typing import Any

from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from boardgym.agents.checkpoint import CheckpointError, check_keys, check_size
from boardgym.agents.ppo.policies import (
    ACTIVATIONS,
    EXTRACTORS,
    MAX_MEMBERS,
    POLICIES,
    EnsemblePolicy,
    TowerPolicy,
)

ARCHITECTURE_TYPES: dict[str, type] = {
    "class": str, "features_extractor": str, "features_extractor_kwargs": dict,
    "net_arch": dict, "activation": str, "share_features_extractor": bool}
"""Every key of the ``policy`` architecture record and its JSON type."""
ENSEMBLE_TYPES: dict[str, type] = {**ARCHITECTURE_TYPES, "members": int}
"""The keys of an ``EnsemblePolicy``'s record: ``ARCHITECTURE_TYPES`` and ``members``, its
number of networks (each of the record's architecture)."""
TOWER_TYPES: dict[str, type] = {"class": str, "channels": int, "blocks": int, "hidden": int}
"""The keys of a ``TowerPolicy``'s record: its class and the az tower's sizes."""
HEADS = ("pi", "vf")
MAX_LAYERS = 16
"""The most hidden layers per head a checkpoint may ask for."""


def class_name(cls: type, allowed: dict[str, Any], kind: str) -> str:
    """The allow-list name of ``cls``.

    Raises:
        ValueError: ``cls`` is not on the allow-list ``allowed``.
    """
    name = cls.__name__
    if allowed.get(name) is not cls:
        raise ValueError(f"a checkpoint cannot name the {kind} {cls.__module__}.{name}; "
                         f"use one of {', '.join(allowed)}")
    return name


def architecture_of(policy: MaskableActorCriticPolicy) -> dict[str, Any]:
    """The JSON architecture record of ``policy`` (``boardgym.json``'s ``policy``).

    Raises:
        ValueError: the policy uses a class that is not on an allow-list of ``policies``.
    """
    if isinstance(policy, TowerPolicy):
        return {"class": "TowerPolicy", **policy.sizes()}
    net_arch = policy.net_arch
    heads = net_arch if isinstance(net_arch, dict) else {head: net_arch for head in HEADS}
    record = {
        "class": class_name(type(policy), POLICIES, "policy class"),
        "features_extractor": class_name(policy.features_extractor_class, EXTRACTORS,
                                         "feature extractor"),
        "features_extractor_kwargs": dict(policy.features_extractor_kwargs),
        "net_arch": {head: [int(width) for width in heads.get(head, [])] for head in HEADS},
        "activation": class_name(policy.activation_fn, ACTIVATIONS, "activation"),
        "share_features_extractor": bool(policy.share_features_extractor),
    }
    if isinstance(policy, EnsemblePolicy):
        record["members"] = policy.member_count
    return record



def extractor_kwargs(extractor: type, kwargs: dict[str, Any], where: str) -> dict[str, Any]:
    """``kwargs`` checked against ``extractor``'s signature: known names only, each of its
    default's type, sizes in range.

    Raises:
        CheckpointError: an unknown name, another type or a size out of range.
    """
    parameters = inspect.signature(extractor).parameters
    for name, value in kwargs.items():
        default = parameters[name].default if name in parameters else inspect.Parameter.empty
        if name == "observation_space" or default is inspect.Parameter.empty:
            raise CheckpointError(f"{where}: {extractor.__name__} takes no argument {name!r}; "
                                  "the file is damaged or not boardgym's")
        if type(value) is not type(default):
            raise CheckpointError(f"{where}: {extractor.__name__} argument {name}={value!r} "
                                  f"is not {type(default).__name__}; the file is damaged")
        if isinstance(value, int) and not isinstance(value, bool):
            check_size(value, name, where, least=0)
    return dict(kwargs)


def net_arch_of(record: dict[str, Any], where: str) -> dict[str, list[int]]:
    """The record's ``net_arch`` (``{"pi": [...], "vf": [...]}``), checked.

    Raises:
        CheckpointError: other heads, too many layers or a width out of range.
    """
    if set(record) != set(HEADS) or not all(isinstance(record[head], list) and
                                            len(record[head]) <= MAX_LAYERS for head in HEADS):
        raise CheckpointError(f"{where}: net_arch must be {{'pi': [...], 'vf': [...]}} with at "
                              f"most {MAX_LAYERS} layers each, got {record!r}")
    return {head: [check_size(width, "net_arch", where) for width in record[head]]
            for head in HEADS}


def policy_arguments(architecture: dict[str, Any], where: str
                     ) -> tuple[type[MaskableActorCriticPolicy], dict[str, Any]]:
    """The policy class and keyword arguments (``policy_kwargs``) an architecture record
    describes, every name looked up in the allow-lists of ``policies``.

    Args:
        architecture: the record (``architecture_of``).
        where: what the record belongs to (a path), for messages.

    Raises:
        CheckpointError: a missing key, a name off the allow-lists, a bad argument.
    """
    if architecture.get("class") == "TowerPolicy":
        check_keys(architecture, TOWER_TYPES, f"{where}: the policy record")
        return TowerPolicy, {name: check_size(architecture[name], name, where)
                             for name in TOWER_TYPES if name != "class"}
    ensemble = architecture.get("class") == "EnsemblePolicy"
    check_keys(architecture, ENSEMBLE_TYPES if ensemble else ARCHITECTURE_TYPES,
               f"{where}: the policy record")
    chosen = {}
    for key, allowed in (("class", POLICIES), ("features_extractor", EXTRACTORS),
                         ("activation", ACTIVATIONS)):
        name = architecture[key]
        if name not in allowed:
            raise CheckpointError(f"{where} names {key} {name!r}, which boardgym does not "
                                  f"build (allowed: {', '.join(allowed)}); not a boardgym "
                                  "checkpoint")
        chosen[key] = allowed[name]
    extractor = chosen["features_extractor"]
    kwargs = {
        "features_extractor_class": extractor,
        "features_extractor_kwargs": extractor_kwargs(
            extractor, architecture["features_extractor_kwargs"], where),
        "net_arch": net_arch_of(architecture["net_arch"], where),
        "activation_fn": chosen["activation"],
        "share_features_extractor": architecture["share_features_extractor"],
    }
    if ensemble:
        members = architecture["members"]
        if not 2 <= members <= MAX_MEMBERS:
            raise CheckpointError(f"{where}: members={members} is not in [2, {MAX_MEMBERS}]; "
                                  "the file is damaged or not boardgym's")
        kwargs["members"] = members
    return chosen["class"], kwargs


__all__ = ["ARCHITECTURE_TYPES", "ENSEMBLE_TYPES", "HEADS", "TOWER_TYPES", "architecture_of",
           "policy_arguments"]
