"""Evaluate a retrieval method on a benchmark: ranked passages, R@k, EM/F1, calls and latency.

    python evaluate.py --config configs/eval/demo.yaml --retriever bm25 --output_dir runs/demo-bm25
    python evaluate.py --config configs/eval/demo_kirag.yaml --kirag.constructor true --output_dir runs/demo-kirag-llm
    python evaluate.py compare runs/demo-bm25 runs/demo-kirag-llm --output_dir runs/demo-compare

Configs are YAML read by jsonargparse (as LightningCLI reads them); any key can be overridden
with a dotted flag such as `--data.format musique`. Predictions are appended as they are made,
so an interrupted run resumes where it stopped when started again with the same config.
`compare` puts finished runs side by side: a markdown table and a plot of recall@k against k.
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
from datamodules.extraction import KnowledgeGraph, TripleExtractor
from datamodules.kg_store import KGStore
from datamodules.loaders import DEMO_DIR, Benchmark, DataConfig
from datamodules.records import complete_log
from inference.constructor import Constructor
from inference.kirag import KiRAG
from inference.methods import Method, Prediction, SingleShotRAG
from inference.mind import KiRAGSearch, MindParams, MindRAG, PassageSearch
from inference.metrics import AnswerMetrics, RecallAtK, answer_scores, recall_at_k
from inference.reader import Reader, ReadingMethod
from inference.retrievers import Retriever, make_retriever
from inference.triple_index import TripleIndex
from models.encoder import Encoder
from models.lm import LazyLM, LMConfig

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
class AlignerConfig:
    """KiRAG's Aligner: the untrained base encoder, an exported folder, a hub id, or a training `.ckpt`
    (whose own pooling, prefixes and lengths then apply)."""

    name: str = "minilm"
    pooling: str = "mean"
    query_prefix: str = ""
    passage_prefix: str = ""
    query_max_length: int = 256
    triple_max_length: int = 64
    batch_size: int = 64
    cache_dir: str = ".cache/triple_embeddings"  # triple embeddings, kept per encoder fingerprint

    def build(self) -> Encoder:
        if self.name.endswith(".ckpt"):
            if not Path(self.name).is_file():
                raise FileNotFoundError(f"Aligner checkpoint {self.name!r} does not exist")
            from models.aligner import AlignerModule

            return AlignerModule.load_from_checkpoint(self.name, map_location="cpu").encoder.eval()
        return Encoder(self.name, pooling=self.pooling, query_prefix=self.query_prefix,
                       passage_prefix=self.passage_prefix, max_length=self.triple_max_length,
                       query_max_length=self.query_max_length)


@dataclass
class KiRAGConfig:
    kg: str = str(DEMO_DIR / "kg")  # the KG store folder (prepare.py kg)
    constructor: bool = False  # False: the Aligner-only mode
    k0: int = 10  # passages retrieved per step
    num_candidates: int = 20  # N: triples kept per step
    max_steps: int = 5  # L
    extract_missing: bool = True  # extract the triples of passages missing from the KG with the LM
    num_demos: int = 2  # extraction demonstrations per passage


@dataclass
class ReaderConfig:
    enabled: bool = False  # answer with the LM from the top passages, for EM/F1
    top_k: int = 3
    max_new_tokens: int = 32
    batch_size: int = 8


@dataclass
class MindConfig:
    params: str | None = None  # α, β, γ, δ, threshold saved by the TriggerCalibrator; None: α=β=1, γ=1.0, δ=0.2
    fixed_threshold: float = 1.0  # the `dragin` method's θ
    entity_filter: str = "cot+confidence"  # none, cot, confidence or cot+confidence
    top_entities: int = 2  # kept by the confidence filter when params set no threshold
    retrieve_k: int = 3  # passages per retrieval
    memory_capacity: int = 8
    max_sentences: int = 6


@dataclass
class EvalConfig:
    data: DataConfig = field(default_factory=DataConfig)
    method: str = "rag"  # one of METHODS
    name: str | None = None  # the method's label in tables; default: built from the settings
    retriever: str = "bm25"  # bm25 or dense
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    index: IndexConfig = field(default_factory=IndexConfig)
    kirag: KiRAGConfig = field(default_factory=KiRAGConfig)
    aligner: AlignerConfig = field(default_factory=AlignerConfig)
    lm: LMConfig = field(default_factory=LMConfig)  # the Constructor, the reader and on-demand extraction
    reader: ReaderConfig = field(default_factory=ReaderConfig)
    mind: MindConfig = field(default_factory=MindConfig)
    top_k: int = 10  # passages kept per question
    batch_size: int = 32  # questions per step, saved after each (one at a time for unbatched methods: MIND)
    output_dir: str = "runs/eval"
    overwrite: bool = False  # discard results of a different config in output_dir


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="evaluate.py", description=__doc__.split("\n")[0], exit_on_error=False)
    parser.add_argument("--config", action=ActionConfigFile, help="YAML config file")
    parser.add_class_arguments(EvalConfig, fail_untyped=True)
    return parser


def parse_config(argv: list[str] | None = None) -> EvalConfig:
    return dataclass_from(EvalConfig, build_parser().parse_args(argv))


MIND_TRIGGERS = {"fixed_interval": "always", "dragin": "fixed", "mind": "dynamic", "kirag+mind": "dynamic"}
METHODS = ("rag", "kirag", *MIND_TRIGGERS)


def label(config: EvalConfig) -> str:
    if config.name:
        return config.name
    if config.method == "kirag":
        mode = "constructor" if config.kirag.constructor else "aligner-only"
        return f"kirag {mode} ({Path(config.aligner.name).name}, {config.retriever})"
    if config.method in ("mind", "kirag+mind"):
        params = "calibrated" if config.mind.params else "hand-set"
        return f"{config.method} {params}, {config.mind.entity_filter} ({config.retriever})"
    return f"{config.method} ({config.retriever})"


def build_retriever(config: EvalConfig, benchmark: Benchmark) -> Retriever:
    encoder, kwargs = None, {}
    if config.retriever == "dense":
        e, index = config.encoder, config.index
        encoder = Encoder(e.name, pooling=e.pooling, normalize=e.normalize, query_prefix=e.query_prefix,
                          passage_prefix=e.passage_prefix, max_length=e.max_length)
        kwargs = dict(index=index.type, hnsw_m=index.hnsw_m, ef_search=index.ef_search, device=index.device,
                      batch_size=e.batch_size)
    retriever = make_retriever(config.retriever, encoder=encoder, **kwargs)
    retriever.build(benchmark.passages, cache_dir=config.index.cache_dir)
    return retriever


def build_method(config: EvalConfig, benchmark: Benchmark) -> Method:
    if config.method not in METHODS:
        raise ValueError(f"unknown method '{config.method}'; known methods: {', '.join(METHODS)}")
    retriever = build_retriever(config, benchmark)
    lm = LazyLM(config.lm)
    if config.method == "rag":
        return with_reader(config, SingleShotRAG(retriever, k=config.top_k), lm, benchmark)
    if config.method in ("kirag", "kirag+mind"):
        k = config.kirag
        if not Path(k.kg).is_dir() and not k.extract_missing:
            raise FileNotFoundError(f"KG store {k.kg!r} does not exist (build it with `prepare.py kg`, "
                                    "or pass --kirag.extract_missing true)")
        extractor = TripleExtractor(lm, num_demos=k.num_demos) if k.extract_missing else None
        kg = KnowledgeGraph(KGStore(k.kg), extractor, benchmark.passage_by_id())
        triples = TripleIndex(config.aligner.build(), config.aligner.cache_dir, config.aligner.batch_size)
        constructor = Constructor(lm) if k.constructor else None
        kirag = KiRAG(retriever, kg, triples, constructor, k=config.top_k, k0=k.k0,
                      num_candidates=k.num_candidates, max_steps=k.max_steps)
        if config.method == "kirag":
            return with_reader(config, kirag, lm, benchmark)
        search = KiRAGSearch(kirag)
    else:
        search = PassageSearch(retriever, benchmark.passage_by_id())
    m = config.mind
    return MindRAG(lm, search, trigger=MIND_TRIGGERS[config.method],
                   params=MindParams.load(m.params) if m.params else None, fixed_threshold=m.fixed_threshold,
                   entity_filter=m.entity_filter, top_entities=m.top_entities, retrieve_k=m.retrieve_k,
                   memory_capacity=m.memory_capacity, max_sentences=m.max_sentences, k=config.top_k)


def with_reader(config: EvalConfig, method: Method, lm, benchmark: Benchmark) -> Method:
    """`method` followed by the reader when `reader.enabled` (MIND methods answer by themselves)."""
    if not config.reader.enabled:
        return method
    r = config.reader
    reader = Reader(lm, top_k=r.top_k, max_new_tokens=r.max_new_tokens, batch_size=r.batch_size)
    return ReadingMethod(method, reader, benchmark.passage_by_id())


def _fingerprint(config: EvalConfig) -> str:
    values = asdict(config)
    for key in ("output_dir", "overwrite", "batch_size", "name"):
        values.pop(key)
    values["index"].pop("cache_dir")
    values["aligner"].pop("cache_dir")
    return hashlib.sha1(json.dumps(values, sort_keys=True).encode()).hexdigest()[:12]


def read_run_config(run_file: Path) -> EvalConfig:
    """The config a run saved in its `run.json`."""
    return dataclass_from(EvalConfig, build_parser().parse_object(json.loads(run_file.read_text())["config"]))


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


def report_columns(rows: list[dict]) -> list[str]:
    columns = ["method", "questions"] + [f"recall@{k}" for k in RECALL_KS]
    columns += [c for c in ("em", "f1") if any(c in r for r in rows)]
    return columns + ["retrieval_calls", "llm_calls", "seconds_per_question"]


def write_report(config: EvalConfig, metrics: dict[str, float], out: Path) -> None:
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    rows = [{"method": label(config), **metrics}]
    table = markdown_table(rows, report_columns(rows))
    (out / "metrics.md").write_text(f"# {config.data.questions}\n\nRecall, EM and F1 in %.\n\n{table}")
    print(table)


def compare(run_dirs: list[str], output_dir: str) -> list[dict]:
    """Finished runs side by side: `comparison.md`, `comparison.json` and `recall_at_k.png` in `output_dir`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = []
    for run in map(Path, run_dirs):
        run_file, metrics_file = run / "run.json", run / "metrics.json"
        for needed in (run_file, metrics_file):
            if not needed.is_file():
                raise FileNotFoundError(f"{needed} does not exist: {run} is not a finished evaluate.py run")
        config = read_run_config(run_file)
        rows.append({"method": label(config), "data": config.data.questions, "run": str(run),
                     **json.loads(metrics_file.read_text())})
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = markdown_table(rows, report_columns(rows))
    datasets = sorted({"/".join(Path(r["data"]).parts[-2:]) for r in rows})
    (out / "comparison.md").write_text(f"# {', '.join(datasets)}\n\nRecall, EM and F1 in %.\n\n{table}")
    (out / "comparison.json").write_text(json.dumps(rows, indent=2) + "\n")
    figure, axes = plt.subplots(figsize=(6, 4))
    for row in rows:
        axes.plot(RECALL_KS, [100 * row[f"recall@{k}"] for k in RECALL_KS], marker="o", label=row["method"])
    axes.set(xlabel="k (passages)", ylabel="recall@k (%)", xticks=RECALL_KS, title=", ".join(datasets))
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(out / "recall_at_k.png", dpi=120)
    plt.close(figure)
    print(table)
    return rows


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["compare"]:
        parser = ArgumentParser(prog="evaluate.py compare", description=compare.__doc__, exit_on_error=False)
        parser.add_argument("runs", type=str, nargs="+", help="output folders of finished runs")
        parser.add_argument("--output_dir", type=str, required=True)
        args = parser.parse_args(argv[1:])
        return exit_code(lambda: compare(args.runs, args.output_dir))
    return exit_code(lambda: evaluate(parse_config(argv)))


if __name__ == "__main__":
    sys.exit(main())
