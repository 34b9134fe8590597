"""Config dataclasses: built from what jsonargparse parsed, and checked where they are built, with one
message that names the key (`kirag.k0 must be at least 1, got 0`).

Each field is documented by an attribute docstring (the string under it), which `--help` shows: every
parser is built with `core.cli.parsing_settings`, which also reads YAML strictly. Every number of a config is finite (`require_finite`): NaN fails every comparison, so a NaN
threshold or learning rate passes range checks and silently disables what it sets.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from typing import Any, TypeVar, get_type_hints

T = TypeVar("T")


class ConfigError(ValueError):
    """A setting out of its range; `key` is its dotted name from the top-level config."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key} {problem}")
        self.key, self.problem = key, problem


def _require(config: Any, names: tuple[str, ...], least: int) -> None:
    for name in names:
        value = getattr(config, name)
        if value is not None and value < least:
            raise ConfigError(name, f"must be at least {least}, got {value}")


def require_positive(config: Any, *names: str) -> None:
    """Each named setting of `config` is at least 1 (None passes: it means "not set")."""
    _require(config, names, 1)


def require_non_negative(config: Any, *names: str) -> None:
    """Each named setting of `config` is at least 0 (None passes)."""
    _require(config, names, 0)


def non_finite(value: Any, key: str = "") -> tuple[str, Any] | None:
    """The dotted key and value of the first NaN or infinite number in `value`: a number, a tensor, or
    mappings, sequences and dataclasses of them, nested (a tensor's key is its own; None if all are finite)."""
    if isinstance(value, float) and not math.isfinite(value):
        return key, value
    if callable(getattr(value, "is_floating_point", None)):  # a torch tensor (core does not import torch)
        return (key, value) if value.is_floating_point() and not bool(value.isfinite().all()) else None
    if is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in fields(value)}
    if hasattr(value, "as_dict"):  # a jsonargparse Namespace
        value = value.as_dict()
    if isinstance(value, Mapping):
        items = value.items()
    elif isinstance(value, (list, tuple)):
        items = ((f"[{i}]", item) for i, item in enumerate(value))
    else:
        return None
    for name, item in items:
        dotted = f"{key}{name}" if str(name).startswith("[") else f"{key}.{name}" if key else str(name)
        if (found := non_finite(item, dotted)) is not None:
            return found
    return None


def require_finite(values: Any) -> None:
    """Every number in `values` (see `non_finite`) is finite; otherwise a `ConfigError` naming its key."""
    if (found := non_finite(values)) is not None:
        raise ConfigError(found[0] or "a setting", f"must be a finite number, got {found[1]}")


def dataclass_from(cls: type[T], values: Any) -> T:
    """Build a (nested) config dataclass from a jsonargparse namespace or a dict, every number finite; a
    `ConfigError` of a nested config names the full key (`kirag.k0`)."""
    values = values.as_dict() if hasattr(values, "as_dict") else dict(values)
    values.pop("config", None)
    require_finite(values)
    hints = get_type_hints(cls)  # resolves annotations written as strings
    kinds = {f.name: hints[f.name] for f in fields(cls)}
    built = {}
    for key, value in values.items():
        if key not in kinds:
            continue
        if is_dataclass(kinds[key]) and value is not None:
            try:
                value = dataclass_from(kinds[key], value)
            except ConfigError as error:
                raise ConfigError(f"{key}.{error.key}", error.problem) from None
        built[key] = value
    return cls(**built)
