"""Evaluate a retrieval method on a benchmark: ranked passages, R@k, EM/F1, calls and latency.

    python evaluate.py --config configs/eval/demo.yaml --retriever bm25 --output_dir runs/demo-bm25

Configs are YAML read by jsonargparse (as LightningCLI reads them); any key can be overridden
with a dotted flag such as `--data.format musique`. Predictions are appended as they are made,
so an interrupted run resumes where it stopped when started again with the same config.
"""

import hashlib
import json
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from jsonargparse import ActionConfigFile, ArgumentParser
from tqdm.auto import tqdm

from cli import dataclass_from, exit_code
from datamodules.records import complete_log
from datamodules.loaders import Benchmark, DataConfig
from inference.methods import METHODS, Method, Prediction
from inference.metrics import AnswerMetrics, RecallAtK, answer_scores, recall_at_k
from inference.retrievers import make_retriever
from models.encoder import Encoder

RECALL_KS = (1, 2, 3, 5, 10)


@dataclass
class EncoderConfig:
    name: str = "minilm"  # a short name of a packaged model, a local path or a hub id
    pooling: str = "mean"
    normalize: bool = True
    query_prefix: str = ""
    passage_prefix: str = ""
    max_length: int = 256
    batch_size: int = 64


@dataclass
class IndexConfig:
    type: str = "flat"  # flat (exact inner product) or hnsw
    hnsw_m: int = 32
    ef_search: int = 128
    device: str = "auto"  # auto: the GPU when faiss has GPU support and one is present
    cache_dir: str = ".cache/indexes"


@dataclass
class EvalConfig:
    data: DataConfig = field(default_factory=DataConfig)
    method: str = "rag"
    retriever: str = "bm25"  # bm25 or dense
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    index: IndexConfig = field(default_factory=IndexConfig)
    top_k: int = 10  # passages kept per question
    batch_size: int = 32  # questions per step; predictions are saved after each
    output_dir: str = "runs/eval"
    overwrite: bool = False  # discard results of a different config in output_dir


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="evaluate.py", description=__doc__.split("\n")[0], exit_on_error=False)
    parser.add_argument("--config", action=ActionConfigFile, help="YAML config file")
    parser.add_class_arguments(EvalConfig, fail_untyped=True)
    return parser


def parse_config(argv: list[str] | None = None) -> EvalConfig:
    return dataclass_from(EvalConfig, build_parser().parse_args(argv))


def build_method(config: EvalConfig, benchmark: Benchmark) -> Method:
    if config.method not in METHODS:
        raise ValueError(f"unknown method '{config.method}'; known methods: {', '.join(METHODS)}")
    encoder, kwargs = None, {}
    if config.retriever == "dense":
        e, index = config.encoder, config.index
        encoder = Encoder(e.name, pooling=e.pooling, normalize=e.normalize, query_prefix=e.query_prefix,
                          passage_prefix=e.passage_prefix, max_length=e.max_length)
        kwargs = dict(index=index.type, hnsw_m=index.hnsw_m, ef_search=index.ef_search, device=index.device,
                      batch_size=e.batch_size)
    retriever = make_retriever(config.retriever, encoder=encoder, **kwargs)
    retriever.build(benchmark.passages, cache_dir=config.index.cache_dir)
    return METHODS[config.method](retriever, k=config.top_k)


def _fingerprint(config: EvalConfig) -> str:
    values = asdict(config)
    for key in ("output_dir", "overwrite", "batch_size"):
        values.pop(key)
    values["index"].pop("cache_dir")
    return hashlib.sha1(json.dumps(values, sort_keys=True).encode()).hexdigest()[:12]


def _load_done(config: EvalConfig, out: Path) -> dict[str, Prediction]:
    """Predictions already made by an earlier run of the same config (resume)."""
    run_file, pred_file = out / "run.json", out / "predictions.jsonl"
    fingerprint = _fingerprint(config)
    if run_file.exists() and not config.overwrite:
        previous = json.loads(run_file.read_text())
        if previous.get("fingerprint") != fingerprint:
            raise ValueError(f"{out} holds results of a different config ({run_file}); "
                             "choose another output_dir or pass --overwrite true")
    out.mkdir(parents=True, exist_ok=True)
    run_file.write_text(json.dumps({"fingerprint": fingerprint, "config": asdict(config)}, indent=2))
    done = {}
    if config.overwrite:
        pred_file.unlink(missing_ok=True)
    for line in complete_log(pred_file).splitlines():
        prediction = Prediction.from_dict(json.loads(line))
        done[prediction.question_id] = prediction
    return done


def evaluate(config: EvalConfig) -> dict[str, float]:
    benchmark = config.data.load()
    out = Path(config.output_dir)
    done = _load_done(config, out)
    todo = [q for q in benchmark.questions if q.id not in done]
    if todo:
        method = build_method(config, benchmark)
        with open(out / "predictions.jsonl", "a") as f, tqdm(total=len(benchmark.questions), initial=len(done),
                                                              desc=f"{config.method}/{config.retriever}") as bar:
            for start in range(0, len(todo), config.batch_size):
                batch = todo[start:start + config.batch_size]
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


def compute_metrics(benchmark: Benchmark, predictions: list[Prediction]) -> dict[str, float]:
    ranked = [[pid for pid, _ in p.passages] for p in predictions]
    gold = [q.gold_passage_ids for q in benchmark.questions]
    metrics: dict[str, float] = {"questions": len(predictions), "questions_with_gold": sum(1 for g in gold if g)}
    for k in RECALL_KS:
        recall = RecallAtK(k)
        recall.update(ranked, gold)
        metrics[f"recall@{k}"] = float(recall.compute())
    answered = [(p.answer, q.answers) for p, q in zip(predictions, benchmark.questions) if p.answer is not None]
    if answered:
        scores = AnswerMetrics()
        scores.update([a for a, _ in answered], [g for _, g in answered])
        metrics.update({k: float(v) for k, v in scores.compute().items()})
    n = max(len(predictions), 1)
    metrics["retrieval_calls"] = sum(p.retrieval_calls for p in predictions) / n
    metrics["llm_calls"] = sum(p.llm_calls for p in predictions) / n
    metrics["seconds_per_question"] = sum(p.seconds for p in predictions) / n
    return metrics


def markdown_table(rows: list[dict], columns: list[str]) -> str:
    """A markdown table; figures in [0, 1] named recall/em/f1 are shown as percentages."""
    def cell(key, value):
        if isinstance(value, float) and key.split("@")[0] in ("recall", "em", "f1"):
            return f"{100 * value:.1f}"
        return f"{value:.3g}" if isinstance(value, float) else str(value)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(c, row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def write_report(config: EvalConfig, metrics: dict[str, float], out: Path) -> None:
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    row = {"method": config.method, "retriever": config.retriever, **metrics}
    columns = ["method", "retriever", "questions"] + [f"recall@{k}" for k in RECALL_KS]
    columns += [c for c in ("em", "f1") if c in metrics] + ["retrieval_calls", "llm_calls", "seconds_per_question"]
    table = markdown_table([row], columns)
    (out / "metrics.md").write_text(f"# {config.data.questions}\n\nRecall, EM and F1 in %.\n\n{table}")
    print(table)


def main(argv: list[str] | None = None) -> int:
    return exit_code(lambda: evaluate(parse_config(argv)))


if __name__ == "__main__":
    sys.exit(main())
