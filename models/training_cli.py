"""The training command's LightningCLI (`train.py`): a config names its LightningModule and LightningDataModule."""

from __future__ import annotations

import importlib
import os
from typing import Any

import lightning as L
import torch
from lightning.pytorch.callbacks import Callback, ModelCheckpoint
from lightning.pytorch.cli import LightningArgumentParser, LightningCLI

from core.cli import parsing_settings
from core.config import non_finite, require_finite
from core.records import checkpoint_file

MODEL_CHECKPOINT = "lightning.pytorch.callbacks.ModelCheckpoint"
CHECKPOINTS = [  # the Aligner's: `trainer.callbacks` of every config that lists none (the trigger's lists its own)
    # best.ckpt: the weights of the best val/mrr (evaluate and export these); last.ckpt is written by the
    # callbacks below, whatever val/mrr does
    {"class_path": MODEL_CHECKPOINT,
     "init_args": {"monitor": "val/mrr", "mode": "max", "save_top_k": 1, "save_last": False, "filename": "best"}},
    # last.ckpt: where training stands, for `--ckpt_path last`: every 5 optimizer steps (about 40 s on one
    # CPU thread) ...
    {"class_path": MODEL_CHECKPOINT, "init_args": {"monitor": None, "filename": "last", "every_n_train_steps": 5}},
    # ... and at the end of every epoch, after its validation, so at the end of training too (one callback
    # cannot have both every_n_train_steps and every_n_epochs)
    {"class_path": MODEL_CHECKPOINT, "init_args": {"monitor": None, "filename": "last", "every_n_epochs": 1}},
]


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

    `trainer.callbacks` defaults to `CHECKPOINTS`. A config's own list replaces them, except a list of
    as many callbacks, which jsonargparse merges with them item by item: `paper_e5_large_ddp.yaml` names
    the three classes and changes one setting of the second.

    Every `ModelCheckpoint` gets `enable_version_counter: false`: a second `train.py fit` into the same
    folder overwrites `last.ckpt` (and a fixed name such as `best.ckpt`) instead of writing
    `last-v1.ckpt` beside a stale `last.ckpt` that later steps would read. (So with `save_top_k` above
    1, `filename` must hold the monitored value, as Lightning advises anyway.)

    A `ModelCheckpoint` without `dirpath` writes to `<trainer.default_root_dir>/checkpoints` (not to the
    logger's folder of this one run, where `--ckpt_path last` would not look next time). The training
    configs rely on it: their checkpoint callbacks share that folder, and `--trainer.default_root_dir`
    moves them all (`--trainer.callbacks.dirpath` would move only the last callback of the list).
    """

    def init_parser(self, **kwargs: Any) -> LightningArgumentParser:
        parsing_settings()
        return super().init_parser(**kwargs)

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        parser.set_defaults({"trainer.callbacks": CHECKPOINTS})

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


def finished(checkpoint: str | os.PathLike, max_epochs: int) -> bool:
    """Whether a checkpoint of `train.py fit` was saved after `max_epochs` epochs: the count at which Lightning's
    fit loop stops, so that resuming from it (`--ckpt_path last`) trains no further."""
    state = torch.load(checkpoint, map_location="cpu", weights_only=False, mmap=True)
    return state["loops"]["fit_loop"]["epoch_progress"]["current"]["processed"] >= max_epochs
