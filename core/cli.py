"""What the command-line entry points share: the training CLI and clean error exits."""

from __future__ import annotations

import os
import sys
from argparse import ArgumentError
from collections.abc import Callable

import lightning as L
from lightning.pytorch.cli import LightningCLI

import core.config  # noqa: F401  (config fields' docstrings in every parser's --help)
from core.records import DataError, OutputBusyError


def lightning_cli(args: list[str] | None = None) -> LightningCLI:
    """LightningCLI in subclass mode: a config names its LightningModule and LightningDataModule."""
    return LightningCLI(L.LightningModule, L.LightningDataModule, subclass_mode_model=True, subclass_mode_data=True,
                        save_config_kwargs={"overwrite": True}, args=args)


DEBUG = "MHR_DEBUG"  # set to 1 to see the traceback of an error


def exit_code(run: Callable[[], object]) -> int:
    """Run a command-line job; an error prints one line instead of a traceback (unless $MHR_DEBUG is set).

    Exit status: 0 done, 2 bad input (data, settings, paths), 1 anything else, 130 interrupted.
    """
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
    return 0
