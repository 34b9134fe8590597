"""`prepare.py recipe`: the commands that make a trained Aligner from raw data (the KGs, the chains, the
training), run in order from the checkout, each skipped when its output is finished.

Each command resumes by itself; the recipe checks before running one whether anything is left to do: a
KG store that holds every passage of its corpus, a chains file that holds every question (made with the
same settings), or a training run whose `last.ckpt` was saved after its last epoch, is done. A check runs
when its step's turn comes, after the steps before it.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import yaml

from core.cli import config_from_file
from core.config import ConfigError
from core.records import read_text
from kg.build import KGConfig, pending_passages
from models.training_cli import finished
from training_data.chains import ChainsConfig, pending_questions


@dataclass
class RecipeConfig:
    """Config files, one command each: `prepare.py kg`, then `prepare.py chains`, then `train.py fit`."""

    kg: list[str] = field(default_factory=list)
    """KG configs (`prepare.py kg --config ...`), run first, in order"""
    chains: list[str] = field(default_factory=list)
    """chains configs (`prepare.py chains --config ...`), run next, in order"""
    train: list[str] = field(default_factory=list)
    """the training config, then any overlays on it (`train.py fit --config ... --config ...`), run last"""

    def __post_init__(self) -> None:
        for key in ("kg", "chains", "train"):
            for path in getattr(self, key):
                if not Path(path).is_file():
                    raise ConfigError(key, f"names {path}, which is not a file")


@dataclass(frozen=True)
class Step:
    command: list[str]
    """the arguments to the Python interpreter, from the checkout"""
    done: bool
    """its output is finished: the recipe skips it"""
    state: str
    """what is left to do, or what is finished"""


def kg_step(config_file: str) -> Step:
    config = config_from_file(KGConfig, config_file)
    pending, total = pending_passages(config)
    state = (f"{len(pending)} of {total} passages to extract, import or restore" if pending
             else f"{config.store} holds all {total} passages")
    return Step(["prepare.py", "kg", "--config", config_file], not pending, state)


def chains_step(config_file: str) -> Step:
    config = config_from_file(ChainsConfig, config_file)
    pending, total = pending_questions(config)
    state = f"{len(pending)} of {total} questions to write" if pending else f"{config.output} holds all {total} questions"
    return Step(["prepare.py", "chains", "--config", config_file], not pending, state)


def train_step(config_files: list[str]) -> Step:
    """`train.py fit`; from the run's `last.ckpt` when there is one (`trainer.default_root_dir` and
    `trainer.max_epochs` as the config files set them, the later ones overriding)."""
    trainer: dict = {}
    for path in config_files:
        trainer.update((yaml.safe_load(read_text(path)) or {}).get("trainer") or {})
    command = ["train.py", "fit", *(arg for path in config_files for arg in ("--config", path))]
    root = trainer.get("default_root_dir")
    last = Path(root, "checkpoints", "last.ckpt") if root else None
    if last is None or not last.is_file():
        return Step(command, False, "trains from the start")
    epochs = trainer.get("max_epochs")
    if isinstance(epochs, int) and finished(last, epochs):
        return Step(command, True, f"{last} was saved after the last epoch ({epochs})")
    return Step([*command, "--ckpt_path", "last"], False, f"resumes from {last}")


def recipe_steps(recipe: RecipeConfig) -> list[Callable[[], Step]]:
    """Each step's check, in the order the steps run."""
    steps = [*(partial(kg_step, path) for path in recipe.kg), *(partial(chains_step, path) for path in recipe.chains)]
    return steps + ([partial(train_step, recipe.train)] if recipe.train else [])


def run_recipe(recipe: RecipeConfig, dry_run: bool = False) -> None:
    """Run the steps that are not done, in order, each in a fresh process; stop at the first that fails.
    With `dry_run`, only say what each would do."""
    steps = recipe_steps(recipe)
    for number, check in enumerate(steps, start=1):
        step = check()
        shown = f"[{number}/{len(steps)}] python {shlex.join(step.command)}"
        if step.done:
            print(f"{shown}\n    skipped, done: {step.state}", flush=True)
            continue
        print(f"{shown}\n    {'would run' if dry_run else 'runs'}: {step.state}", flush=True)
        if not dry_run and (code := subprocess.run([sys.executable, *step.command]).returncode):
            raise RuntimeError(f"step {number} failed (exit status {code}): python {shlex.join(step.command)}; "
                               "the same command resumes the recipe")
