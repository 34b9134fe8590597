"""Per-question score files: what a table's figures and tests are recomputed from.

A scores file (`*.jsonl.gz`: gzip JSON Lines, no traces) holds one run, one record per question:
`method` (the run's label in tables), `question_id`, `corpus` (a digest of the corpus's passage ids,
so that runs over different corpora are never paired), then the question's scores and costs as
`evaluation.metrics.question_scores` gives them (None where a figure cannot be computed).
`evaluate.py` writes one beside every run's predictions (`scores.jsonl.gz`); benchmarks commit theirs
under `benchmarks/results/`; `evaluate.py compare` reads either these files or run folders.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from core.records import DataError, write_atomic
from core.types import Passage
from datamodules.loaders import Benchmark
from evaluation.config import read_run_config
from evaluation.metrics import question_scores, summarize
from evaluation.predictions import read_predictions
from inference.methods import Prediction

SCORES_NAME = "scores.jsonl.gz"
KEYS = ("method", "question_id", "corpus")


def corpus_digest(passages: list[Passage]) -> str:
    """16 hex digits of sha256 over the sorted passage ids (ids hash title and text)."""
    return hashlib.sha256("\n".join(sorted(p.id for p in passages)).encode()).hexdigest()[:16]


@dataclass
class ScoredRun:
    """One run's per-question scores (question id -> figure -> value or None), in question order."""

    method: str
    corpus: str
    scores: dict[str, dict[str, float | None]]
    source: str  # the run folder or scores file it was read from

    def summary(self) -> dict[str, float | None]:
        return summarize(self.scores)


def scored_run(method: str, benchmark: Benchmark, predictions: list[Prediction], source: str = "") -> ScoredRun:
    return ScoredRun(method, corpus_digest(benchmark.passages), question_scores(benchmark, predictions), source)


def write_scores(run: ScoredRun, path: str | Path) -> None:
    lines = [json.dumps({"method": run.method, "question_id": q, "corpus": run.corpus, **row})
             for q, row in run.scores.items()]
    write_atomic(path, "".join(line + "\n" for line in lines), compress=True)


def read_scores(path: str | Path) -> ScoredRun:
    """A scores file; a record of another run (method or corpus), or one lacking a key, is a `DataError`."""
    path = Path(path)
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise DataError(path, None, f"not a readable gzip file ({error})") from None
    scores: dict[str, dict[str, float | None]] = {}
    first = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise DataError(path, f"line {number}", f"malformed JSON: {error.msg}") from None
        if not isinstance(record, dict) or (missing := [k for k in KEYS if k not in record]):
            raise DataError(path, f"line {number}", f"not a score record (missing {', '.join(missing or KEYS)})")
        first = first or record
        if (record["method"], record["corpus"]) != (first["method"], first["corpus"]):
            raise DataError(path, f"line {number}", "a record of another run (method or corpus) than line 1's")
        scores[record["question_id"]] = {k: v for k, v in record.items() if k not in KEYS}
    if first is None:
        raise DataError(path, None, "holds no score records")
    return ScoredRun(first["method"], first["corpus"], scores, str(path))


def read_run(path: str | Path) -> ScoredRun:
    """The scores of an `evaluate.py` run folder (from its predictions and its data, on the questions
    its metrics cover) or of a scores file."""
    path = Path(path)
    if path.is_file():
        return read_scores(path)
    run_file, metrics_file = path / "run.json", path / "metrics.json"
    for needed in (run_file, metrics_file):
        if not needed.is_file():
            raise FileNotFoundError(f"{needed} does not exist: {path} is neither a scores file nor an "
                                    "evaluate.py run with metrics")
    config = read_run_config(run_file)
    count = int(json.loads(metrics_file.read_text())["questions"])
    benchmark = config.data.load()
    predictions = read_predictions(path / "predictions.jsonl")
    questions = [q for q in benchmark.questions[:count] if q.id in predictions]
    return scored_run(config.label(), Benchmark(questions, benchmark.passages),
                      [predictions[q.id] for q in questions], str(path))
