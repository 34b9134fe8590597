"""What the command-line entry points share: the training CLI, its guards, and clean error exits."""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
from argparse import ArgumentError
from collections.abc import Callable

import lightning as L
import torch
from lightning.pytorch.callbacks import Callback, ModelCheckpoint
from lightning.pytorch.cli import LightningCLI

from core.config import non_finite, require_finite  # importing it: docstrings in --help, strict YAML
from core.records import DataError, OutputBusyError, checkpoint_file

LIGHTNING_CKPT_PATHS = ("last", "best", "hpc", "registry")  # --ckpt_path values that name no file


class TrainingGuard(Callback):
    """What every `train.py` run checks, whatever its config (`TrainingCLI` adds it):

    - a fit has a validation set, unless `trainer.limit_val_batches` is 0: without one, the checkpoint
      that monitors a validation metric (best.ckpt) is never written, and the run would end "fine";
    - the loss is finite, checked before its backward pass, so the step that would spread NaN into
      the weights never happens: the run stops there with an error;
    - no checkpoint is saved with a weight that is not finite.
    """

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        data = trainer.datamodule
        if stage != "fit" or data is None or trainer.limit_val_batches == 0:
            return
        try:
            empty = len(data.val_dataloader()) == 0  # [] or a DataLoader of no batches
        except TypeError:  # a loader without a length
            empty = False
        if empty:
            raise ValueError(f"{type(data).__name__} has no validation set (too few questions for its held-out "
                             "share?): the best checkpoint, chosen on validation, would never be written. Add data, "
                             "hold out more (data.val_fraction), or set --trainer.limit_val_batches 0 to train "
                             "without validation")

    def on_before_backward(self, trainer: L.Trainer, pl_module: L.LightningModule, loss: torch.Tensor) -> None:
        if not bool(torch.isfinite(loss).all()):
            raise FloatingPointError(f"the training loss is {float(loss)} at step {trainer.global_step} (epoch "
                                     f"{trainer.current_epoch}): training stopped before that step changed the "
                                     "weights; lower the learning rate, or check the temperature and the data")

    def on_save_checkpoint(self, trainer: L.Trainer, pl_module: L.LightningModule, checkpoint: dict) -> None:
        if (found := non_finite(checkpoint["state_dict"])) is not None:
            raise FloatingPointError(f"the weight {found[0]} holds NaN or infinite values at step "
                                     f"{trainer.global_step}: no checkpoint is saved of them")


class TrainingCLI(LightningCLI):
    """LightningCLI whose checkpoints keep their names and their folder from one run to the next, and
    that refuses what would train a useless model: a setting that is not a finite number, a
    `--ckpt_path` that is not a whole checkpoint, and what `TrainingGuard` checks during the fit.

    Every `ModelCheckpoint` gets `enable_version_counter: false`: a second `train.py fit` into the same
    folder overwrites `last.ckpt` (and a fixed name such as `best.ckpt`) instead of writing
    `last-v1.ckpt` beside a stale `last.ckpt` that later steps would read. (So with `save_top_k` above
    1, `filename` must hold the monitored value, as Lightning advises anyway.)

    A `ModelCheckpoint` without `dirpath` writes to `<trainer.default_root_dir>/checkpoints` (not to the
    logger's folder of this one run, where `--ckpt_path last` would not look next time). The training
    configs rely on it: their checkpoint callbacks share that folder, and `--trainer.default_root_dir`
    moves them all (`--trainer.callbacks.dirpath` would move only the last callback of the list).
    """

    def parse_arguments(self, parser, args) -> None:
        super().parse_arguments(parser, args)
        config = self.config.get(str(self.config.get("subcommand")), self.config)
        ckpt_path = config.get("ckpt_path")  # LightningCLI reads the file next, with torch's long errors
        if ckpt_path is not None and ckpt_path not in LIGHTNING_CKPT_PATHS:
            checkpoint_file(ckpt_path, "--ckpt_path")

    def before_instantiate_classes(self) -> None:
        config = self.config.get(str(self.subcommand), self.config)
        try:
            require_finite(config)
        except ValueError as error:  # a ConfigError: name the key as its flag is written (--model.lr)
            raise ValueError(str(error).replace(".init_args.", ".")) from None
        trainer = config.get("trainer") or {}
        callbacks = trainer.get("callbacks") or []
        root = trainer.get("default_root_dir")
        for callback in callbacks if isinstance(callbacks, list) else [callbacks]:
            module, _, name = str(callback.get("class_path", "")).rpartition(".")
            if module and issubclass(getattr(importlib.import_module(module), name, object), ModelCheckpoint):
                callback.init_args.enable_version_counter = False
                if callback.init_args.get("dirpath") is None and root is not None:
                    callback.init_args.dirpath = os.path.join(str(root), "checkpoints")

    def instantiate_trainer(self, **kwargs) -> L.Trainer:
        trainer = super().instantiate_trainer(**kwargs)
        trainer.callbacks.insert(0, TrainingGuard())  # before the checkpoint callbacks (Lightning keeps those last)
        return trainer


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
