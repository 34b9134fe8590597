"""The resumable evaluation run: predictions are appended and fsynced as they are made, so a run
started again with the same config and the same inputs resumes where it stopped; then metrics and
the report. `run.json` (the config, and the digests of the local inputs that decide the results: the
questions, the corpus, the KG store, the encoder, the Aligner, MIND's parameters; not an LM folder,
whose gigabytes would be read at every start), `metrics.json`, `metrics.md` and the per-question
`scores.jsonl.gz` are written whole (temporary file, then rename)."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from tqdm.auto import tqdm

from core.records import DataError, append_log, content_digest, exclusive_output, log_digest, log_extends, write_atomic
from core.text import answer_scores
from core.types import Question
from datamodules.loaders import Benchmark
from evaluation.config import EvalConfig, run_config
from evaluation.factory import KG_METHODS, build_method
from evaluation.metrics import RECALL_KS, recall_at_k
from evaluation.predictions import read_predictions
from evaluation.report import write_report
from evaluation.scores import SCORES_NAME, scored_run
from inference.methods import Method, Prediction
from kg.store import LOG_NAME


# A method whose predictions changed meaning gets a new version, kept in `run.json`: a run of an earlier
# version is refused, not resumed (a run saved before versions were kept is version 1).
# rag+rerank 2: a passage-level fusion of retriever and Aligner scores (1: best triple); kirag+mind 2: a KiRAG search
# keeps the loop's whole ranking (1: its top mind.retrieve_k)
METHOD_VERSIONS = {"rag+rerank": 2, "kirag+mind": 2}


def method_version(config: EvalConfig) -> int:
    return METHOD_VERSIONS.get(config.method, 1)


def _fingerprint(config: EvalConfig) -> str:
    """What decides the predictions: every setting except where they go and how they are batched."""
    values = asdict(config)
    for key in ("output_dir", "overwrite", "batch_size", "name"):
        values.pop(key)
    values["index"].pop("cache_dir")
    values["aligner"].pop("cache_dir")
    values["mind"].pop("concurrency")
    return hashlib.sha1(json.dumps(values, sort_keys=True).encode()).hexdigest()[:12]


KG_KEY = "kirag.kg"


def _inputs(config: EvalConfig) -> dict[str, Path]:
    """The local files and folders that decide the results, by the setting that names them (the corpus
    also when it is implicit: the `passages.jsonl` beside unified questions)."""
    corpus = config.data.corpus_file()
    named = {"data.questions": config.data.questions, "data.corpus": corpus, "data.gold_titles": config.data.gold_titles,
             "encoder.name": config.encoder.name, "aligner.name": config.aligner.name, "mind.params": config.mind.params}
    if config.method in KG_METHODS:
        named[KG_KEY] = Path(config.kirag.kg) / LOG_NAME
    return {key: Path(path) for key, path in named.items() if path and Path(path).exists()}


def _input_digests(config: EvalConfig) -> dict[str, str]:
    """Digests of the inputs' contents: a path does not say what it held (a retrained checkpoint,
    recalibrated parameters or rewritten data keep their paths). The KG store's log is digested as a
    prefix: passages appended later (extracted as a run goes) are new ones, and change no earlier result."""
    return {key: log_digest(path) if key == KG_KEY else content_digest(path) for key, path in _inputs(config).items()}


def _previous_run(run_file: Path) -> tuple[EvalConfig, dict[str, str], int] | None:
    """The config an earlier run saved in `run.json`, read back with today's defaults for any key it
    lacks (so a run made before a new setting existed still resumes when that setting keeps its
    default), its inputs' digests (none in a run saved before they were recorded) and its method's version."""
    if not run_file.exists():
        return None
    try:
        record = json.loads(run_file.read_text())
        return run_config(record), record.get("inputs", {}), record.get("method_version", 1)
    except (ValueError, KeyError, TypeError) as error:
        raise DataError(run_file, None, f"not a readable run record ({' '.join(str(error).split())}); "
                                        "pass --overwrite true to start the run over") from None


def _check_resumable(out: Path, previous: tuple[EvalConfig, dict[str, str], int], config: EvalConfig,
                     inputs: dict[str, str]) -> None:
    saved, saved_inputs, saved_version = previous
    if _fingerprint(saved) != _fingerprint(config):
        raise ValueError(f"{out} holds results of a different config ({out / 'run.json'}); "
                         "choose another output_dir or pass --overwrite true")
    if saved_version != method_version(config):
        raise ValueError(f"{out} holds results of version {saved_version} of method {config.method}, which is now "
                         f"version {method_version(config)} (evaluation/runner.py METHOD_VERSIONS): choose another "
                         "output_dir or pass --overwrite true")
    paths = _inputs(config)
    changed = sorted(k for k in inputs.keys() & saved_inputs.keys()
                     if not (log_extends(paths[k], saved_inputs[k]) if k == KG_KEY else inputs[k] == saved_inputs[k]))
    if changed:
        raise ValueError(f"{out} holds results made from other contents of {', '.join(changed)} (the files "
                         f"changed since; {out / 'run.json'} keeps their digests): choose another output_dir "
                         "or pass --overwrite true")


def held_by_others(configs: list[EvalConfig]) -> list[str]:
    """The output folders of `configs` that hold a run of another config or other inputs, which resuming
    would refuse: a batch of runs checks them all before its first, not each when its turn comes."""
    return [c.output_dir for c in configs
            if (Path(c.output_dir) / "run.json").is_file() and not made_by(Path(c.output_dir) / "run.json", c)]


def made_by(run_file: Path, config: EvalConfig, inputs: bool = True) -> bool:
    """Whether the run recorded in `run_file` (a `run.json`, or a copy committed beside its scores) was made
    by `config` over today's inputs: what resuming it would require. `inputs=False`: by `config` and its
    method's version, whatever its inputs hold today (a run kept as it was made, its inputs' digests in
    `run_file`)."""
    previous = _previous_run(Path(run_file))
    if previous is None:
        return False
    try:
        _check_resumable(Path(run_file).parent, previous, config, _input_digests(config) if inputs else {})
    except ValueError:
        return False
    return True


def evaluate(config: EvalConfig, until: int | None = None) -> dict[str, float]:
    """Run `config.method` on every question not yet predicted in `config.output_dir`; returns the metrics.

    `until`: predict only the first `until` questions, and report the metrics of those (their
    `questions` says how many), so several methods can advance side by side in blocks, each block
    leaving a report, and an interrupted benchmark leaves them level.
    The output folder is locked for the whole run. Nothing in it changes before the data and the
    models have loaded and the first step's questions are predicted: `--overwrite true` removes the old
    results only then, so a run that cannot predict (a prompt that cannot fit, a model that does not
    load) leaves them whole.
    """
    if until is not None and config.overwrite:
        raise ValueError("overwrite would start the run over at every block: evaluate in blocks (until) without it")
    benchmark = config.data.load()
    out = Path(config.output_dir)
    with exclusive_output(out, is_folder=True):
        run_file, pred_file = out / "run.json", out / "predictions.jsonl"
        previous = None if config.overwrite else _previous_run(run_file)
        inputs = _input_digests(config)
        if previous is not None:
            _check_resumable(out, previous, config, inputs)
        done = {} if config.overwrite else read_predictions(pred_file)
        questions = benchmark.questions[:until]
        todo = [q for q in questions if q.id not in done]
        steps = _steps(build_method(config, benchmark), todo, config.batch_size) if todo else iter(())
        first = next(steps, None)  # before anything is deleted (see above)
        stale = ["metrics.json", "metrics.md", SCORES_NAME] + (["predictions.jsonl"] if config.overwrite else [])
        for name in stale if todo else []:
            (out / name).unlink(missing_ok=True)
        write_atomic(run_file, json.dumps({"config": asdict(config), "inputs": inputs,
                                           "method_version": method_version(config)}, indent=2))
        if first is not None:
            _append(itertools.chain([first], steps), benchmark, config, done, pred_file)
        run = scored_run(config.label(), Benchmark(questions, benchmark.passages), [done[q.id] for q in questions],
                         str(out))
        return write_report(config, run, out)


Step = tuple[list[Question], list[Prediction]]


def _steps(method: Method, todo: list[Question], batch_size: int) -> Iterator[Step]:
    """The questions of `todo` and their predictions, a step at a time (`batch_size` questions, or one
    for an unbatched method)."""
    step = batch_size if method.batched else 1
    for start in range(0, len(todo), step):
        batch = todo[start:start + step]
        yield batch, method.predict(batch)


def _append(steps: Iterator[Step], benchmark: Benchmark, config: EvalConfig, done: dict[str, Prediction],
            pred_file: Path) -> None:
    """Append the records of each step to `pred_file`, fsynced after each."""
    with append_log(pred_file) as f, tqdm(total=len(benchmark.questions), initial=len(done),
                                          desc=f"{config.method}/{config.retriever}") as bar:
        for batch, predictions in steps:
            for question, prediction in zip(batch, predictions, strict=True):
                record = prediction.to_dict()
                record["gold_passage_ids"] = question.gold_passage_ids
                record.update({f"recall@{k}": recall_at_k([p for p, _ in prediction.passages],
                                                           question.gold_passage_ids, k) for k in RECALL_KS})
                if prediction.answer is not None and question.answers:
                    record.update(answer_scores(prediction.answer, question.answers))
                f.write(json.dumps(record) + "\n")
                done[question.id] = prediction
            f.flush()
            os.fsync(f.fileno())
            bar.update(len(batch))
