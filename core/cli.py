"""What the command-line entry points share: the training CLI and clean error exits."""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
from argparse import ArgumentError
from collections.abc import Callable

import lightning as L
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.cli import LightningCLI

import core.config  # noqa: F401  (config fields' docstrings in every parser's --help)
from core.records import DataError, OutputBusyError


class TrainingCLI(LightningCLI):
    """LightningCLI whose checkpoints keep their names and their folder from one run to the next.

    Every `ModelCheckpoint` gets `enable_version_counter: false`: a second `train.py fit` into the same
    folder overwrites `last.ckpt` (and a fixed name such as `best.ckpt`) instead of writing
    `last-v1.ckpt` beside a stale `last.ckpt` that later steps would read. (So with `save_top_k` above
    1, `filename` must hold the monitored value, as Lightning advises anyway.)

    A `ModelCheckpoint` without `dirpath` writes to `<trainer.default_root_dir>/checkpoints` (not to the
    logger's folder of this one run, where `--ckpt_path last` would not look next time). The training
    configs rely on it: their checkpoint callbacks share that folder, and `--trainer.default_root_dir`
    moves them all (`--trainer.callbacks.dirpath` would move only the last callback of the list).
    """

    def before_instantiate_classes(self) -> None:
        config = self.config.get(str(self.subcommand), self.config)
        trainer = config.get("trainer") or {}
        callbacks = trainer.get("callbacks") or []
        root = trainer.get("default_root_dir")
        for callback in callbacks if isinstance(callbacks, list) else [callbacks]:
            module, _, name = str(callback.get("class_path", "")).rpartition(".")
            if module and issubclass(getattr(importlib.import_module(module), name, object), ModelCheckpoint):
                callback.init_args.enable_version_counter = False
                if callback.init_args.get("dirpath") is None and root is not None:
                    callback.init_args.dirpath = os.path.join(str(root), "checkpoints")


def lightning_cli(args: list[str] | None = None) -> LightningCLI:
    """LightningCLI in subclass mode: a config names its LightningModule and LightningDataModule."""
    return TrainingCLI(L.LightningModule, L.LightningDataModule, subclass_mode_model=True, subclass_mode_data=True,
                       save_config_kwargs={"overwrite": True}, args=args)


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
