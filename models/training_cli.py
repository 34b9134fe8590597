"""The training command's LightningCLI (`train.py`): a config names its LightningModule and LightningDataModule."""

from __future__ import annotations

import importlib
import os
from typing import Any

import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.cli import LightningArgumentParser, LightningCLI

from core.cli import parsing_settings

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


class TrainingCLI(LightningCLI):
    """LightningCLI whose checkpoints keep their names and their folder from one run to the next.

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


def finished(checkpoint: str | os.PathLike, max_epochs: int) -> bool:
    """Whether a checkpoint of `train.py fit` was saved after `max_epochs` epochs: the count at which Lightning's
    fit loop stops, so that resuming from it (`--ckpt_path last`) trains no further."""
    state = torch.load(checkpoint, map_location="cpu", weights_only=False, mmap=True)
    return state["loops"]["fit_loop"]["epoch_progress"]["current"]["processed"] >= max_epochs
