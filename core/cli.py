"""What the command-line entry points share: typed configs from jsonargparse, the training CLI, and
clean error exits.

Config dataclasses document each field in an attribute docstring (the string under it); parsers
built after this module is imported show those strings in `--help`.
"""

from __future__ import annotations

import sys
from argparse import ArgumentError
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any, TypeVar, get_type_hints

import lightning as L
from jsonargparse import set_parsing_settings
from lightning.pytorch.cli import LightningCLI

from core.records import DataError

set_parsing_settings(docstring_parse_attribute_docstrings=True)

T = TypeVar("T")


def dataclass_from(cls: type[T], values: Any) -> T:
    """Build a (nested) config dataclass from a jsonargparse namespace or a dict."""
    values = values.as_dict() if hasattr(values, "as_dict") else dict(values)
    values.pop("config", None)
    hints = get_type_hints(cls)  # resolves annotations written as strings
    kinds = {f.name: hints[f.name] for f in fields(cls)}
    return cls(**{k: dataclass_from(kinds[k], v) if is_dataclass(kinds.get(k)) and v is not None else v
                  for k, v in values.items() if k in kinds})


def lightning_cli(args: list[str] | None = None) -> LightningCLI:
    """LightningCLI in subclass mode: a config names its LightningModule and LightningDataModule."""
    return LightningCLI(L.LightningModule, L.LightningDataModule, subclass_mode_model=True, subclass_mode_data=True,
                        save_config_kwargs={"overwrite": True}, args=args)


def exit_code(run: Callable[[], object]) -> int:
    """Run a command-line job: bad input prints one clear line and exits 2 instead of a traceback."""
    try:
        run()
    except (DataError, FileNotFoundError, ValueError, KeyError, ArgumentError) as error:
        print(f"error: {error.args[0] if isinstance(error, KeyError) else error}", file=sys.stderr)
        return 2
    return 0
