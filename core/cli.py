"""What the command-line entry points share: jsonargparse parsers with the project's settings, and clean
error exits."""

from __future__ import annotations

import os
import signal
import sys
import threading
from argparse import ArgumentError
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from jsonargparse import ActionConfigFile, ArgumentParser, get_loader, set_loader, set_parsing_settings

from core.config import dataclass_from
from core.records import DataError, OutputBusyError

T = TypeVar("T")


class ConfigFileError(yaml.YAMLError):
    """A config file that parses but cannot be meant as written."""


def _refuse_duplicate_keys(node: yaml.Node | None, path: str) -> None:
    if isinstance(node, yaml.MappingNode):
        first: dict[Any, int] = {}
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value != "<<":
                line = key.start_mark.line + 1
                if key.value in first:
                    raise ConfigFileError(f"{path or 'a YAML value'}: line {line}: the key {key.value!r} is given "
                                          f"again (first at line {first[key.value]}); give each setting once")
                first[key.value] = line
            _refuse_duplicate_keys(value, path)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _refuse_duplicate_keys(item, path)


_jsonargparse_yaml_load = get_loader("yaml")


def strict_yaml_load(stream: str, path: str = "") -> Any:
    """jsonargparse's YAML loader, refusing a key given twice in one mapping and, for a config file
    (`path` given), a file that holds no settings."""
    _refuse_duplicate_keys(yaml.compose(stream, Loader=yaml.SafeLoader), str(path))
    value = _jsonargparse_yaml_load(stream)
    if path and value is None:
        raise ConfigFileError(f"{path}: the config file holds no settings (it is empty or only comments)")
    return value


def parsing_settings() -> None:
    """jsonargparse's settings for the project's parsers, set by each command as it builds one: `--help`
    shows every config field's attribute docstring (the string under the field), and YAML is read
    strictly: a key given twice in one mapping, or a config file with no settings, is an error naming
    the file (PyYAML would take the last value, and jsonargparse say only "Unexpected config")."""
    set_parsing_settings(docstring_parse_attribute_docstrings=True)
    set_loader("yaml", strict_yaml_load, exceptions=(yaml.YAMLError,))


def argument_parser(**kwargs: Any) -> ArgumentParser:
    """A jsonargparse `ArgumentParser(**kwargs)` with the project's `parsing_settings`."""
    parsing_settings()
    return ArgumentParser(**kwargs)


def config_parser(cls: type, **kwargs: Any) -> ArgumentParser:
    """A parser of the config dataclass `cls`: its fields as flags, and `--config` for a YAML file of them."""
    parser = argument_parser(**kwargs)
    parser.add_argument("--config", action=ActionConfigFile)
    parser.add_class_arguments(cls)
    return parser


def config_from_file(cls: type[T], path: str | Path) -> T:
    """The config dataclass `cls` of a YAML file, read as `config_parser(cls)` reads `--config path`."""
    return dataclass_from(cls, config_parser(cls, exit_on_error=False).parse_args(["--config", str(path)]))


DEBUG = "MHR_DEBUG"  # set to 1 to see the traceback of an error


def exit_code(run: Callable[[], object], sigterm: bool = True) -> int:
    """Run a command-line job; an error prints one line instead of a traceback (unless $MHR_DEBUG is set).

    Exit status: 0 done, 2 bad input (data, settings, paths), 1 anything else, 130 interrupted.
    SIGTERM (a scheduler's or `kill`'s stop) interrupts like Ctrl-C, so `finally` blocks still save
    what was finished (a KG archive, for one); `sigterm=False` leaves it to the job (the Trainer stops
    every DDP rank at the same step on it).
    """
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _interrupt) if main_thread and sigterm else None
    try:
        run()
    except KeyboardInterrupt:
        print("interrupted: what was finished is saved; the same command resumes", file=sys.stderr)
        return 130
    except Exception as error:
        if os.environ.get(DEBUG):
            raise
        bad_input = isinstance(error, (DataError, FileNotFoundError, NotADirectoryError, IsADirectoryError, ValueError,
                                       KeyError, ArgumentError, OutputBusyError))
        message = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
        message = " ".join(message.split()) or type(error).__name__
        hint = "" if bad_input else f" ({type(error).__name__}; set {DEBUG}=1 for the traceback)"
        print(f"error: {message}{hint}", file=sys.stderr)
        return 2 if bad_input else 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")
