"""What the command-line entry points share: typed configs from jsonargparse, and clean error exits."""

import sys
from dataclasses import fields, is_dataclass
from typing import Any, Callable, TypeVar, get_type_hints

from datamodules.records import DataError

T = TypeVar("T")


def dataclass_from(cls: type[T], values: Any) -> T:
    """Build a (nested) config dataclass from a jsonargparse namespace or a dict."""
    values = values.as_dict() if hasattr(values, "as_dict") else dict(values)
    values.pop("config", None)
    hints = get_type_hints(cls)  # resolves annotations written as strings
    kinds = {f.name: hints[f.name] for f in fields(cls)}
    return cls(**{k: dataclass_from(kinds[k], v) if is_dataclass(kinds.get(k)) and v is not None else v
                  for k, v in values.items() if k in kinds})


def exit_code(run: Callable[[], object]) -> int:
    """Run a command-line job: bad input prints one clear line and exits 2 instead of a traceback."""
    try:
        run()
    except (DataError, FileNotFoundError, ValueError, KeyError) as error:
        print(f"error: {error.args[0] if isinstance(error, KeyError) else error}", file=sys.stderr)
        return 2
    return 0
