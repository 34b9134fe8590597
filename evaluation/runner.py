"""The resumable evaluation run: predictions are appended and fsynced as they are made, so a run
started again with the same config resumes where it stopped; then metrics and the report."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path

from tqdm.auto import tqdm

from core.records import complete_log
from core.text import answer_scores
from evaluation.config import EvalConfig, read_run_config
from evaluation.factory import build_method
from evaluation.metrics import RECALL_KS, compute_metrics, recall_at_k
from evaluation.report import write_report
from inference.methods import Prediction


def _fingerprint(config: EvalConfig) -> str:
    """What decides the predictions: every setting except where they go and how they are batched."""
    values = asdict(config)
    for key in ("output_dir", "overwrite", "batch_size", "name"):
        values.pop(key)
    values["index"].pop("cache_dir")
    values["aligner"].pop("cache_dir")
    return hashlib.sha1(json.dumps(values, sort_keys=True).encode()).hexdigest()[:12]


def _load_done(config: EvalConfig, out: Path) -> dict[str, Prediction]:
    """Predictions already made by an earlier run of the same config (resume).

    The earlier config is read back with today's defaults for any key it lacks, so a run made
    before a new setting existed still resumes when that setting keeps its default.
    """
    run_file, pred_file = out / "run.json", out / "predictions.jsonl"
    if run_file.exists() and not config.overwrite:
        if _fingerprint(read_run_config(run_file)) != _fingerprint(config):
            raise ValueError(f"{out} holds results of a different config ({run_file}); "
                             "choose another output_dir or pass --overwrite true")
    out.mkdir(parents=True, exist_ok=True)
    run_file.write_text(json.dumps({"config": asdict(config)}, indent=2))
    done = {}
    if config.overwrite:
        pred_file.unlink(missing_ok=True)
    for line in complete_log(pred_file).splitlines():
        prediction = Prediction.from_dict(json.loads(line))
        done[prediction.question_id] = prediction
    return done


def evaluate(config: EvalConfig) -> dict[str, float]:
    """Run `config.method` on every question not yet predicted in `config.output_dir`; returns the metrics."""
    benchmark = config.data.load()
    out = Path(config.output_dir)
    done = _load_done(config, out)
    todo = [q for q in benchmark.questions if q.id not in done]
    if todo:
        method = build_method(config, benchmark)
        with open(out / "predictions.jsonl", "a") as f, tqdm(total=len(benchmark.questions), initial=len(done),
                                                              desc=f"{config.method}/{config.retriever}") as bar:
            step = config.batch_size if method.batched else 1
            for start in range(0, len(todo), step):
                batch = todo[start:start + step]
                for question, prediction in zip(batch, method.predict(batch), strict=True):
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
    metrics = compute_metrics(benchmark, [done[q.id] for q in benchmark.questions])
    write_report(config, metrics, out)
    return metrics
