"""train.py (LightningCLI) end to end on a tiny encoder: configs, fast_dev_run, exact resume, export.py,
checkpoint names across runs, validation per dataset."""

import json
import signal
from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import lightning as L
import pytest
import torch
import yaml
from conftest import tiny_bert
from lightning.pytorch.callbacks import ModelCheckpoint
from transformers import AutoModel

import export
from evaluate import main as evaluate_main
from core.chains import ChainRecord, write_chains
from core.cli import exit_code
from core.types import Triple
from datamodules.aligner_datamodule import AlignerDataModule, collate
from models.aligner import AlignerModule
from models.encoder import EncoderConfig
from models.training_cli import MODEL_CHECKPOINT, finished, lightning_cli

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs" / "aligner").glob("*.yaml"))
TRAINING_CONFIGS = [*CONFIGS, ROOT / "configs" / "trigger" / "demo.yaml"]


def tiny_chains(n: int = 12) -> list[ChainRecord]:
    """Questions of 2-3 hops, each hop with 4 candidate negatives; every 4th one unordered."""
    records = []
    for q in range(n):
        chain = tuple(Triple.make(f"e{q}{i}", "born in", f"e{q}{i + 1}", f"p{q}{i}") for i in range(2 + q % 2))
        negatives = tuple(tuple(Triple.make(f"x{q}{i}{j}", "born in", "city", "px") for j in range(4)) for i in chain)
        records.append(ChainRecord(f"q{q}", f"who {q}?", "bridge", q % 4 != 3, True, chain, negatives))
    return records


def confusable_chains(n: int = 20) -> list[ChainRecord]:
    """Chains as in `tiny_chains`, but the negatives of each hop are chain triples of other questions,
    which the tiny encoder confuses with its own: validation MRR moves from epoch to epoch."""
    chains = {q: tuple(Triple.make(f"e{q}{i}", "born in", f"e{q}{i + 1}", f"p{q}{i}") for i in range(2 + q % 2))
              for q in range(n)}
    records = []
    for q, chain in chains.items():
        others = [t for o in range(n) if o != q for t in chains[o]]
        negatives = tuple(tuple(others[(7 * q + 3 * i + j) % len(others)] for j in range(4)) for i in range(len(chain)))
        records.append(ChainRecord(f"q{q}", f"who {q}?", "bridge", q % 4 != 3, True, chain, negatives))
    return records


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, tiny_tokenizer):
    """A tiny random BERT saved as a folder, and chains files: `chains.jsonl` and `confusable/chains.jsonl`."""
    folder = tmp_path_factory.mktemp("inputs")
    tiny_bert(len(tiny_tokenizer)).save_pretrained(folder / "model")
    tiny_tokenizer.save_pretrained(folder / "model")
    write_chains(folder / "chains.jsonl", tiny_chains())
    write_chains(folder / "confusable" / "chains.jsonl", confusable_chains())
    return folder


def fit_args(inputs, run_dir, *extra: str) -> list[str]:
    """10 questions for training, 2 for validation, batches of 4: 5 steps per epoch, 2 epochs. The demo
    config's checkpoint callbacks as they are: all write to `run_dir/checkpoints` (models/training_cli.py)."""
    return [
        "fit", "--config", str(ROOT / "configs" / "aligner" / "demo.yaml"),
        "--model.encoder.name", str(inputs / "model"), "--model.lr", "1e-3",
        "--data.chains", str(inputs / "chains.jsonl"), "--data.batch_size", "4",
        "--trainer.logger", "false", "--trainer.max_epochs", "2", "--trainer.deterministic", "true",
        "--trainer.enable_progress_bar", "false", "--trainer.enable_model_summary", "false",
        "--trainer.default_root_dir", str(run_dir), *extra,
    ]


def resume_args(inputs) -> list[str]:
    """16 questions of confusable chains for training, 4 for validation, batches of 3: 11 steps per epoch
    (so the demo config's every 5 steps fall in the middle of epochs), 3 epochs."""
    return ["--data.chains", str(inputs / "confusable" / "chains.jsonl"), "--data.batch_size", "3",
            "--trainer.max_epochs", "3"]


def load(path: Path) -> dict:
    return torch.load(path, weights_only=False)


def same_tensors(expected: dict, actual: dict) -> bool:
    return expected.keys() == actual.keys() and all(torch.equal(expected[k], actual[k]) for k in expected)


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


class RecordValMRR(L.Callback):
    """Keeps `val/mrr` after every validation of the run (not the sanity check), with its epoch."""

    def __init__(self) -> None:
        self.values: list[tuple[int, float]] = []

    def on_validation_end(self, trainer, pl_module) -> None:
        if not trainer.sanity_checking:
            self.values.append((trainer.current_epoch, float(trainer.callback_metrics["val/mrr"])))


def val_mrr(cli) -> list[tuple[int, float]]:
    return next(c for c in cli.trainer.callbacks if isinstance(c, RecordValMRR)).values


RECORD = f"--trainer.callbacks+={__name__}.RecordValMRR"


@pytest.fixture(scope="module")
def full_run(inputs, tmp_path_factory):
    """An uninterrupted run of 33 steps (`resume_args`) with the demo config's checkpoints."""
    run_dir = tmp_path_factory.mktemp("full")
    cli = lightning_cli(fit_args(inputs, run_dir, *resume_args(inputs), RECORD))
    return run_dir, cli


def printed_callbacks(config: Path, capsys) -> list[dict]:
    """`trainer.callbacks` as `train.py fit --config <config> --print_config` prints them."""
    with pytest.raises(SystemExit):
        lightning_cli(["fit", "--config", str(config), "--print_config"])
    return yaml.safe_load(capsys.readouterr().out)["trainer"]["callbacks"]


@pytest.mark.parametrize("config", TRAINING_CONFIGS, ids=[f"{c.parent.name}-{c.stem}" for c in TRAINING_CONFIGS])
def test_every_training_config_keeps_best_and_last(config, capsys):
    """best.ckpt follows the monitored metric; last.ckpt follows training, every few steps and at each
    epoch's end, whatever the metric does; all in one folder, each weight stored once."""
    callbacks = printed_callbacks(config, capsys)
    checkpoints = [c["init_args"] for c in callbacks if c["class_path"].endswith(".ModelCheckpoint")]
    best, *last = checkpoints
    assert best["monitor"] and best["filename"] == "best" and best["save_top_k"] == 1
    assert last and all(c["monitor"] is None and c["filename"] == "last" and c["save_top_k"] == 1 for c in last)
    assert any(c["every_n_epochs"] == 1 for c in last)  # so at the end of training too
    if config.parent.name == "aligner":  # the trigger's epochs take milliseconds
        assert any((c["every_n_train_steps"] or 0) > 0 for c in last)
    assert all(not c["save_last"] and c["dirpath"] is None for c in checkpoints)


@pytest.mark.parametrize("config", CONFIGS, ids=[c.stem for c in CONFIGS])
def test_the_aligner_configs_get_train_py_three_checkpoints(config, capsys):
    """The configs do not write the checkpoints out; train.py's (CHECKPOINTS) are: best.ckpt by val/mrr,
    last.ckpt every 5 optimizer steps (500 in the GPU recipe, which changes only that) and at each epoch's end."""
    keys = ("monitor", "mode", "save_top_k", "save_last", "filename", "every_n_train_steps", "every_n_epochs")
    callbacks = [(c["class_path"], {k: c["init_args"][k] for k in keys}) for c in printed_callbacks(config, capsys)]
    last = {"monitor": None, "mode": "min", "save_top_k": 1, "save_last": None, "filename": "last"}
    assert callbacks == [
        (MODEL_CHECKPOINT, {"monitor": "val/mrr", "mode": "max", "save_top_k": 1, "save_last": False, "filename": "best",
                            "every_n_train_steps": None, "every_n_epochs": None}),
        (MODEL_CHECKPOINT, {**last, "every_n_train_steps": 500 if config.stem == "paper_e5_large_ddp" else 5,
                            "every_n_epochs": None}),
        (MODEL_CHECKPOINT, {**last, "every_n_train_steps": None, "every_n_epochs": 1}),
    ]


def test_a_config_with_its_own_checkpoints_replaces_train_py_ones(capsys):
    callbacks = printed_callbacks(ROOT / "configs" / "trigger" / "demo.yaml", capsys)
    assert [(c["init_args"]["monitor"], c["init_args"]["every_n_train_steps"]) for c in callbacks] == [
        ("val/loss", None), (None, None)]


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


def test_train_py_reports_bad_chains_in_one_line_and_leaves_sigterm_to_the_trainer(inputs, tmp_path, capsys,
                                                                                  monkeypatch):
    """train.py's entry: exit status 2 and the file, line and field, no traceback; SIGTERM keeps the
    handler the Trainer composes with its own (it stops every DDP rank at the same step)."""
    monkeypatch.delenv("MHR_DEBUG", raising=False)
    bad = tmp_path / "chains.jsonl"
    bad.write_text(json.dumps({"question_id": "q1", "question": "x"}) + "\n")
    handlers = []

    def fit():
        handlers.append(signal.getsignal(signal.SIGTERM))
        lightning_cli(fit_args(inputs, tmp_path, "--data.chains", str(bad)))

    before = signal.getsignal(signal.SIGTERM)
    assert exit_code(fit, sigterm=False) == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"error: {bad}: line 1: missing field 'chain'"
    assert handlers == [before]


def test_resume_mid_epoch_matches_an_uninterrupted_run(inputs, tmp_path, full_run):
    """The demo config's own checkpoints, killed in the middle of the last epoch, after the last time
    val/mrr improved: `--ckpt_path last` resumes from the latest 5th step, not from that improvement."""
    full_dir, full = full_run
    values = val_mrr(full)
    assert full.trainer.global_step == 33 and [epoch for epoch, _ in values] == [0, 1, 2]
    assert len({mrr for _, mrr in values}) > 1  # the metric moves, so best.ckpt is a choice
    with pytest.raises(Preempted):
        lightning_cli(fit_args(inputs, tmp_path, *resume_args(inputs),
                               f"--trainer.callbacks+={__name__}.PreemptAtStep", "--trainer.callbacks.step", "28"))
    folder = tmp_path / "checkpoints"
    assert sorted(p.name for p in folder.iterdir()) == ["best.ckpt", "last.ckpt"]
    best, last = load(folder / "best.ckpt"), load(folder / "last.ckpt")
    assert last["global_step"] == 25  # steps 26-28 are redone
    assert not finished(folder / "last.ckpt", 3)  # in the last epoch, but not at its end
    # best.ckpt, saved at an epoch's end (step 11 or 22), is where a last.ckpt written only with a new
    # best (save_last on the val/mrr callback) would have resumed from, losing every step after it.
    assert best["global_step"] in (11, 22)

    resumed = lightning_cli(fit_args(inputs, tmp_path, *resume_args(inputs), "--ckpt_path", "last", RECORD))
    assert resumed.trainer.global_step == 33 and val_mrr(resumed) == values[2:]
    assert same_tensors(full.model.state_dict(), resumed.model.state_dict())
    # best.ckpt: that of the best val/mrr of all three epochs (the first of equal values), as uninterrupted
    best_epoch, best_mrr = max(values, key=lambda v: v[1])
    best, full_best = load(folder / "best.ckpt"), load(full_dir / "checkpoints" / "best.ckpt")
    assert best["epoch"] == full_best["epoch"] == best_epoch
    assert best["val_results"]["val/mrr"] == full_best["val_results"]["val/mrr"] == pytest.approx(best_mrr)
    assert same_tensors(full_best["state_dict"], best["state_dict"])
    assert float(resumed.trainer.checkpoint_callback.best_model_score) == pytest.approx(best_mrr)
    # last.ckpt: the end of training, the same as the uninterrupted run's
    last, full_last = load(folder / "last.ckpt"), load(full_dir / "checkpoints" / "last.ckpt")
    assert last["global_step"] == full_last["global_step"] == 33
    assert finished(folder / "last.ckpt", 3) and not finished(folder / "last.ckpt", 4)  # so the recipe skips it
    assert same_tensors(full_last["state_dict"], last["state_dict"])
    assert same_tensors(full.model.state_dict(), last["state_dict"])


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


def test_a_second_run_into_the_same_folder_overwrites_best_and_last(inputs, tmp_path):
    """No `last-v1.ckpt` beside a stale `last.ckpt`; `best.ckpt` holds the run's best val/mrr and
    `last.ckpt` its end."""
    lightning_cli(fit_args(inputs, tmp_path, "--trainer.max_epochs", "1"))
    second = lightning_cli(fit_args(inputs, tmp_path, "--trainer.max_epochs", "3", "--model.lr", "3e-3", RECORD))
    folder = tmp_path / "checkpoints"
    assert sorted(p.name for p in folder.iterdir()) == ["best.ckpt", "last.ckpt"]
    assert not any(p.is_symlink() for p in folder.iterdir())
    callbacks = second.trainer.checkpoint_callbacks
    assert len(callbacks) == 3 and all(isinstance(c, ModelCheckpoint) for c in callbacks)
    # TrainingCLI turns the version counter off and puts them all in <default_root_dir>/checkpoints
    assert all(not c._enable_version_counter and Path(c.dirpath) == folder.resolve() for c in callbacks)
    callback = second.trainer.checkpoint_callback
    assert callback.monitor == "val/mrr" and Path(callback.best_model_path) == (folder / "best.ckpt").resolve()
    values = val_mrr(second)
    assert [epoch for epoch, _ in values] == [0, 1, 2]
    best_epoch, best_mrr = max(values, key=lambda v: v[1])  # the first of equal values, as ModelCheckpoint keeps
    best, last = load(folder / "best.ckpt"), load(folder / "last.ckpt")
    assert best["hyper_parameters"]["lr"] == last["hyper_parameters"]["lr"] == 3e-3  # both of the second run
    assert best["epoch"] == best_epoch and best["val_results"]["val/mrr"] == pytest.approx(best_mrr)
    assert float(callback.best_model_score) == pytest.approx(best_mrr)
    assert last["global_step"] == second.trainer.global_step == 15  # the end of the run, whatever val/mrr did
    assert same_tensors(second.model.state_dict(), last["state_dict"])


def test_validation_metrics_per_dataset_by_hand(inputs, monkeypatch):
    """Two validation batches over datasets `a` and `train` (absent from the second): each dataset's MRR,
    R@1 and R@5 are those of its own queries, and the overall ones those of all queries."""
    module = AlignerModule(EncoderConfig(name=str(inputs / "model"), max_length=64, query_max_length=256))
    module.add_dataset_metrics(["a", "train"])  # `train` is also a Module method

    def batch(datasets: list[str], first: int, width: int) -> dict:
        return collate([{"index": first + i, "dataset": d, "question_id": f"q{i}", "query": "who", "positive": "<p>",
                         "negatives": ["<n>"] * width} for i, d in enumerate(datasets)])

    # Queries all [1, 0]: a score is the first coordinate. Ranks: 2nd of 3, 1st of 1 (no negatives), 1st of 2.
    first = (torch.tensor([[0.9, 0.1], [0.0, 1.0], [1.0, 0.0]]),
             torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[5.0, 5.0], [9.0, 0.0]], [[0.5, 0.5], [9.0, 0.0]]]),
             torch.tensor([[True, True], [False, False], [True, False]]))
    # Ranks 3rd of 3 and 7th of 7.
    second = (torch.tensor([[0.2, 0.0], [0.1, 0.0]]),
              torch.tensor([[[1.0, 0.0], [0.5, 0.5]] + [[0.0, 0.0]] * 4, [[0.2 + 0.1 * j, 0.0] for j in range(6)]]),
              torch.tensor([[True, True] + [False] * 4, [True] * 6]))
    for datasets, start, (pos, negs, mask) in ((["a", "train", "a"], 0, first), (["a", "a"], 3, second)):
        queries = torch.tensor([[1.0, 0.0]] * len(datasets))
        monkeypatch.setattr(module, "embed", lambda b, q=queries, p=pos, n=negs, m=mask: (q, p, n, m))
        module.validation_step(batch(datasets, start, negs.shape[1]), 0)
    results = {k: float(v) for k, v in module.val_metrics.compute().items()}
    for metrics in module.val_dataset_metrics.values():
        results |= {k: float(v) for k, v in metrics.compute().items()}
    assert results == pytest.approx({
        "val/mrr": (1 / 2 + 1 + 1 + 1 / 3 + 1 / 7) / 5, "val/r@1": 2 / 5, "val/r@5": 4 / 5,
        "val/a/mrr": (1 / 2 + 1 + 1 / 3 + 1 / 7) / 4, "val/a/r@1": 1 / 4, "val/a/r@5": 3 / 4,
        "val/train/mrr": 1.0, "val/train/r@1": 1.0, "val/train/r@5": 1.0,
    })


@pytest.fixture(scope="module")
def two_datasets(inputs) -> dict[str, str]:
    """Two chains files whose question ids collide (q0, q1, ...): 12 and 4 questions. With val_fraction
    0.2 and batches of 4, the validation questions of b all go to rank 1 of 2."""
    files = {"a": inputs / "a" / "chains.jsonl", "b": inputs / "b" / "chains.jsonl"}
    write_chains(files["a"], tiny_chains(12))
    write_chains(files["b"], [replace(r, question=f"b: {r.question}") for r in tiny_chains(4)])
    return {name: str(path) for name, path in files.items()}


def per_dataset_check(cli) -> None:
    """val/<name>/mrr for both datasets, and val/mrr their average weighted by validation queries."""
    metrics = cli.trainer.callback_metrics
    data = AlignerDataModule(**{k: v for k, v in cli.datamodule.hparams.items() if not k.startswith("_")})
    data.setup("fit")  # the same split (under ddp_spawn, this process never set it up)
    queries = Counter()
    for name, record in zip(data.val_record_datasets, data.val_records):
        queries[name] += len(record.chain)
    assert set(queries) == {"a", "b"} and data.val_dataset_names == ["a", "b"]
    for key in ("mrr", "r@1", "r@5"):
        weighted = sum(n * float(metrics[f"val/{name}/{key}"]) for name, n in queries.items()) / queries.total()
        assert float(metrics[f"val/{key}"]) == pytest.approx(weighted)
    best = torch.load(Path(cli.trainer.checkpoint_callback.best_model_path), weights_only=False)
    assert {"val/a/mrr", "val/b/mrr"} <= set(best["val_results"])
    assert best["data_hparams"]["chains"] == {"a": data.datasets["a"], "b": data.datasets["b"]}


def test_training_on_two_datasets_logs_validation_per_dataset(inputs, two_datasets, tmp_path):
    cli = lightning_cli(fit_args(inputs, tmp_path, "--data.chains", json.dumps(two_datasets),
                                 "--trainer.max_epochs", "1"))
    per_dataset_check(cli)
    best = tmp_path / "checkpoints" / "best.ckpt"
    assert export.main(["--ckpt_path", str(best), "--output_dir", str(tmp_path / "out")]) == 0
    card = (tmp_path / "out" / "README.md").read_text()
    assert f"`a: {two_datasets['a']}, b: {two_datasets['b']}`" in card and "| val/b/mrr |" in card


def test_two_process_ddp_validation_per_dataset(inputs, two_datasets, tmp_path):
    """Each rank updates every dataset's metrics, even one whose queries all went to the other rank."""
    seen = []
    for rank in (0, 1):
        data = AlignerDataModule(two_datasets, val_fraction=0.2, batch_size=4)
        data.trainer = SimpleNamespace(global_rank=rank, world_size=2)
        data.setup("fit")
        seen.append({d for batch in data.val_dataloader() for d in batch["datasets"]})
    assert seen == [{"a"}, {"a", "b"}]
    cli = lightning_cli(fit_args(inputs, tmp_path, "--data.chains", json.dumps(two_datasets),
                                 "--trainer.max_epochs", "1", "--trainer.strategy", "ddp_spawn",
                                 "--trainer.devices", "2"))
    per_dataset_check(cli)


def fit_exit(inputs, run_dir, *extra: str) -> int:
    """train.py's exit status for `fit_args(inputs, run_dir, *extra)` (LightningCLI exits by itself, with
    status 2, on what its parser refuses)."""
    try:
        return exit_code(lambda: lightning_cli(fit_args(inputs, run_dir, *extra)), sigterm=False)
    except SystemExit as stop:
        return stop.code


@pytest.mark.parametrize("setting, value, written", [("temperature", ".nan", "nan"), ("lr", ".inf", "inf")])
def test_a_non_finite_number_in_a_training_yaml_is_refused_naming_the_key(inputs, tmp_path, capsys, monkeypatch,
                                                                           setting, value, written):
    monkeypatch.delenv("MHR_DEBUG", raising=False)
    override = tmp_path / "override.yaml"
    override.write_text(f"model:\n  init_args:\n    {setting}: {value}\n")
    assert fit_exit(inputs, tmp_path, "--config", str(override)) == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"error: model.{setting} must be a finite number, got {written}"
    assert not (tmp_path / "checkpoints").exists()


def test_a_duplicate_key_in_a_training_yaml_is_an_error(inputs, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MHR_DEBUG", raising=False)
    override = tmp_path / "override.yaml"
    override.write_text("model:\n  init_args:\n    lr: 0.001\n    lr: 0.1\n")
    assert fit_exit(inputs, tmp_path, "--config", str(override)) == 2
    assert "override.yaml: line 4: the key 'lr' is given again (first at line 3)" in capsys.readouterr().err


def test_training_stops_at_the_first_non_finite_loss_and_saves_no_checkpoint_of_it(inputs, tmp_path, capsys,
                                                                                  monkeypatch):
    monkeypatch.delenv("MHR_DEBUG", raising=False)
    losses = AlignerModule.training_loss
    monkeypatch.setattr(AlignerModule, "training_loss",
                        lambda self, batch: losses(self, batch) * (float("nan") if self.global_step == 6 else 1))
    assert fit_exit(inputs, tmp_path) == 1
    assert "the training loss is nan at step 6 (epoch 1)" in capsys.readouterr().err
    last = load(tmp_path / "checkpoints" / "last.ckpt")  # the end of epoch 0 (5 steps), never a later one
    assert last["global_step"] == 5 and not any(v.isnan().any() for v in last["state_dict"].values())


def test_no_checkpoint_is_saved_with_a_non_finite_weight(inputs, tmp_path):
    cli = lightning_cli(fit_args(inputs, tmp_path, "--trainer.fast_dev_run", "true"))
    with torch.no_grad():
        next(cli.model.parameters())[0] = float("inf")
    with pytest.raises(FloatingPointError, match="holds NaN or infinite values at step 1: no checkpoint is saved"):
        cli.trainer.save_checkpoint(tmp_path / "diverged.ckpt")
    assert not (tmp_path / "diverged.ckpt").exists()


def test_evaluate_and_export_refuse_a_checkpoint_with_non_finite_weights(full_run, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MHR_DEBUG", raising=False)
    checkpoint = load(full_run[0] / "checkpoints" / "last.ckpt")
    name = next(k for k in checkpoint["state_dict"] if k.endswith("word_embeddings.weight"))
    checkpoint["state_dict"][name][3, 0] = float("nan")
    torch.save(checkpoint, tmp_path / "diverged.ckpt")
    assert export.main(["--ckpt_path", str(tmp_path / "diverged.ckpt"), "--output_dir", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: {tmp_path / 'diverged.ckpt'}: the weight {name} holds NaN or infinite values: the training that "
        "wrote it diverged; train again (lower the learning rate)")
    assert not (tmp_path / "out").exists()
    assert evaluate_main(["--method", "kirag", "--aligner.name", str(tmp_path / "diverged.ckpt"),
                          "--kirag.extract_missing", "false", "--data.limit", "2",
                          "--output_dir", str(tmp_path / "run")]) == 2
    assert "holds NaN or infinite values" in capsys.readouterr().err


def test_a_fit_without_validation_fails_unless_the_config_turns_validation_off(inputs, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MHR_DEBUG", raising=False)
    one = tmp_path / "one" / "chains.jsonl"
    write_chains(one, tiny_chains(1))
    assert fit_exit(inputs, tmp_path / "a", "--data.chains", str(one)) == 2
    assert "AlignerDataModule has no validation set" in capsys.readouterr().err
    assert not (tmp_path / "a" / "checkpoints").exists()
    assert fit_exit(inputs, tmp_path / "b", "--data.chains", str(one), "--trainer.limit_val_batches", "0") == 0
    assert (tmp_path / "b" / "checkpoints" / "last.ckpt").exists()


@pytest.mark.parametrize("make, message", [
    (lambda path: path.mkdir(), "--ckpt_path '{path}' is a folder, not a checkpoint file"),
    (lambda path: path.write_bytes(b"PK\x03\x04 cut short"), "{path}: not a checkpoint that train.py wrote, or a "
                                                             "truncated one"),
])
def test_a_ckpt_path_that_is_a_folder_or_truncated_is_refused_in_one_line(inputs, tmp_path, capsys, monkeypatch,
                                                                         make, message):
    monkeypatch.delenv("MHR_DEBUG", raising=False)
    path = tmp_path / "last.ckpt"
    make(path)
    assert fit_exit(inputs, tmp_path, "--ckpt_path", str(path)) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: " + message.format(path=path)) and err.count("\n") == 1
