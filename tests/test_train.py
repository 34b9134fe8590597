"""train.py (LightningCLI) end to end on a tiny encoder: configs, fast_dev_run, exact resume, export.py."""

from pathlib import Path

import lightning as L
import pytest
import torch
from conftest import tiny_bert
from transformers import AutoModel

import export
from core.chains import ChainRecord, write_chains
from core.cli import lightning_cli
from core.types import Triple

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs" / "aligner").glob("*.yaml"))


def tiny_chains(n: int = 12) -> list[ChainRecord]:
    """Questions of 2-3 hops, each hop with 4 candidate negatives; every 4th one unordered."""
    records = []
    for q in range(n):
        chain = tuple(Triple.make(f"e{q}{i}", "born in", f"e{q}{i + 1}", f"p{q}{i}") for i in range(2 + q % 2))
        negatives = tuple(tuple(Triple.make(f"x{q}{i}{j}", "born in", "city", "px") for j in range(4)) for i in chain)
        records.append(ChainRecord(f"q{q}", f"who {q}?", "bridge", q % 4 != 3, True, chain, negatives))
    return records


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, tiny_tokenizer):
    """A tiny random BERT saved as a folder, and a chains file."""
    folder = tmp_path_factory.mktemp("inputs")
    tiny_bert(len(tiny_tokenizer)).save_pretrained(folder / "model")
    tiny_tokenizer.save_pretrained(folder / "model")
    write_chains(folder / "chains.jsonl", tiny_chains())
    return folder


def fit_args(inputs, run_dir, *extra: str) -> list[str]:
    """10 questions for training, 2 for validation, batches of 4: 5 steps per epoch, 2 epochs."""
    return [
        "fit", "--config", str(ROOT / "configs" / "aligner" / "demo.yaml"),
        "--model.encoder.name", str(inputs / "model"), "--model.lr", "1e-3",
        "--data.chains", str(inputs / "chains.jsonl"), "--data.batch_size", "4",
        "--trainer.logger", "false", "--trainer.max_epochs", "2", "--trainer.deterministic", "true",
        "--trainer.enable_progress_bar", "false", "--trainer.enable_model_summary", "false",
        "--trainer.default_root_dir", str(run_dir), "--trainer.callbacks.dirpath", str(run_dir / "checkpoints"),
        *extra,
    ]


class Preempted(Exception):
    pass


class PreemptAtStep(L.Callback):
    """Kills training after `step` optimizer steps, as a preempted job: nothing is saved on the way out.

    (A graceful `trainer.should_stop` would instead end the epoch, and checkpoint it as finished.)
    """

    def __init__(self, step: int) -> None:
        self.step = step

    def on_train_batch_start(self, trainer, *args) -> None:
        if trainer.global_step >= self.step:
            raise Preempted


class RecordQuestions(L.Callback):
    """Writes each rank's training batches (question ids) to `folder/rank{r}.txt`, one line per batch."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        with open(Path(self.folder) / f"rank{trainer.global_rank}.txt", "a") as f:
            f.write(" ".join(batch["question_ids"]) + "\n")


@pytest.fixture(scope="module")
def full_run(inputs, tmp_path_factory):
    """An uninterrupted run of 10 steps that saves a checkpoint after every step."""
    run_dir = tmp_path_factory.mktemp("full")
    cli = lightning_cli(fit_args(inputs, run_dir, "--trainer.callbacks.every_n_train_steps", "1"))
    return run_dir, cli


@pytest.mark.parametrize("config", CONFIGS, ids=[c.stem for c in CONFIGS])
def test_every_config_parses(config, capsys):
    with pytest.raises(SystemExit) as exit_info:
        lightning_cli(["fit", "--config", str(config), "--print_config"])
    assert exit_info.value.code == 0
    printed = capsys.readouterr().out
    assert "val/mrr" in printed and "gradient_clip_val: 1.0" in printed


def test_fast_dev_run_through_the_cli(inputs, tmp_path):
    cli = lightning_cli(fit_args(inputs, tmp_path, "--trainer.fast_dev_run", "true"))
    assert cli.trainer.state.finished and cli.trainer.global_step == 1
    assert torch.isfinite(cli.trainer.callback_metrics["train/loss"])
    assert 0 < cli.trainer.callback_metrics["val/mrr"] <= 1


def test_resume_mid_epoch_matches_an_uninterrupted_run(inputs, tmp_path, full_run):
    _, full = full_run
    assert full.trainer.global_step == 10
    # A checkpoint after every step (not waiting for val/mrr), killed in the middle of the first epoch.
    every_step = ["--trainer.callbacks.every_n_train_steps", "1", "--trainer.callbacks.monitor", "null"]
    with pytest.raises(Preempted):
        lightning_cli(fit_args(inputs, tmp_path, *every_step,
                          f"--trainer.callbacks+={__name__}.PreemptAtStep", "--trainer.callbacks.step", "3"))
    assert torch.load(tmp_path / "checkpoints" / "last.ckpt", weights_only=False)["global_step"] == 3
    resumed = lightning_cli(fit_args(inputs, tmp_path, "--ckpt_path", "last"))
    assert resumed.trainer.global_step == 10
    expected, actual = full.model.state_dict(), resumed.model.state_dict()
    assert expected.keys() == actual.keys()
    assert all(torch.equal(expected[k], actual[k]) for k in expected)


def test_export_cli_writes_a_loadable_folder_with_card_and_fails_clearly_offline(full_run, tmp_path, capsys):
    run_dir, full = full_run
    checkpoint = run_dir / "checkpoints" / "last.ckpt"
    assert export.main(["--ckpt_path", str(checkpoint), "--output_dir", str(tmp_path / "out")]) == 0
    model = AutoModel.from_pretrained(tmp_path / "out")
    trained, exported = full.model.encoder.model.state_dict(), model.state_dict()
    assert exported.keys() == trained.keys()
    assert all(torch.equal(exported[k], trained[k]) for k in trained)
    card = (tmp_path / "out" / "README.md").read_text()
    assert "val/mrr" in card and "chains.jsonl" in card
    code = export.main(["--ckpt_path", str(checkpoint), "--output_dir", str(tmp_path / "out"),
                        "--push_to_hub", "user/aligner"])
    assert code == 1 and "could not reach the Hugging Face hub to push" in capsys.readouterr().err


def test_two_process_ddp_shares_each_global_batch_between_ranks(inputs, tmp_path):
    """CPU processes with gloo: gathered loss, rank shards, synced metrics, unequal validation shares."""
    cli = lightning_cli(fit_args(inputs, tmp_path, "--trainer.strategy", "ddp_spawn", "--trainer.devices", "2",
                            "--trainer.max_epochs", "1", f"--trainer.callbacks+={__name__}.RecordQuestions",
                            f"--trainer.callbacks.folder={tmp_path}"))
    assert 0 <= cli.trainer.callback_metrics["val/mrr"] <= 1
    ranks = [(tmp_path / f"rank{r}.txt").read_text().splitlines() for r in (0, 1)]
    assert len(ranks[0]) == len(ranks[1]) == 5  # 20 examples in global batches of 4
    for first, second in zip(*ranks):
        assert len(first.split()) == len(second.split()) == 2 and not set(first.split()) & set(second.split())
