"""Config dataclasses: built from what jsonargparse parsed, and checked where they are built, with one
message that names the key (`kirag.k0 must be at least 1, got 0`).

Each field is documented by an attribute docstring (the string under it), which `--help` shows: every
parser is built with `core.cli.parsing_settings`.
"""

from __future__ import annotations

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


def dataclass_from(cls: type[T], values: Any) -> T:
    """Build a (nested) config dataclass from a jsonargparse namespace or a dict; a `ConfigError` of a
    nested config names the full key (`kirag.k0`)."""
    values = values.as_dict() if hasattr(values, "as_dict") else dict(values)
    values.pop("config", None)
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
