"""Offline preparation: raw files -> unified data -> indexes -> knowledge triples -> training chains.

    python prepare.py data --data.format musique --data.questions ../shared/data/musique/kag_100.json \
        --output_dir data/musique-kag
    python prepare.py index --config configs/eval/demo.yaml --retriever dense
    python prepare.py kg --config configs/kg/demo.yaml
    python prepare.py chains --config configs/chains/demo.yaml
    python prepare.py traces --config configs/trigger/traces_demo.yaml

`data` writes `questions.jsonl` and `passages.jsonl` in the unified format (read back with
`--data.format unified`). `index` builds (or finds up to date) the retrieval index of a corpus.
`kg` extracts the corpus's knowledge triples with an LM, or imports external ones (`openie`),
into a resumable store: a rerun continues where an interrupted one stopped. `chains` builds the
Aligner's training file: silver reasoning chains over the gold passages' triples, with candidate
negatives mined from the passages retrieved at each step (see datamodules/silver_chains.py).
`traces` runs the LM closed-book on training questions and writes the labelled per-sentence and
per-entity signals that calibrate MIND's trigger and entity filter (datamodules/trigger_traces.py).
"""

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from datasets import Dataset
from jsonargparse import ActionConfigFile, ArgumentParser

from cli import dataclass_from, exit_code
from datamodules.chain_pipeline import ChainsConfig, build_chains_file, chain_report
from datamodules.extraction import TripleExtractor
from datamodules.kg_store import KGStore
from datamodules.loaders import Benchmark, DataConfig
from datamodules.openie_import import import_openie
from models.lm import LMConfig


def write_unified(benchmark: Benchmark, output_dir: str | Path) -> Path:
    """Write `questions.jsonl` and `passages.jsonl` (read back with `--data.format unified`)."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("questions", benchmark.questions), ("passages", benchmark.passages)):
        Dataset.from_list([r.to_dict() for r in rows]).to_json(out / f"{name}.jsonl", lines=True, force_ascii=False)
    print(f"wrote {len(benchmark.questions)} questions and {len(benchmark.passages)} passages to {out}")
    return out


@dataclass
class KGConfig:
    data: DataConfig = field(default_factory=DataConfig)
    store: str = "runs/kg/demo"  # the KGStore folder
    openie: str | None = None  # import these HippoRAG OpenIE triples instead of extracting
    lm: LMConfig = field(default_factory=LMConfig)
    encoder: str = "minilm"  # chooses the few-shot demonstrations per passage
    num_demos: int = 5
    batch_size: int = 8
    max_new_tokens: int = 512
    only_gold: bool = False  # only the questions' gold passages (enough for chains without negatives)
    limit: int | None = None  # only the first N corpus passages


def build_kg(config: KGConfig) -> dict:
    benchmark = config.data.load()
    passages = benchmark.passages
    if config.only_gold:
        gold = {pid for q in benchmark.questions for pid in q.gold_passage_ids}
        passages = [p for p in passages if p.id in gold]
    passages = passages[: config.limit]
    store = KGStore(config.store)
    if config.openie:
        summary = import_openie(config.openie, passages, store)
    else:
        from models.encoder import Encoder

        encoder = Encoder(config.encoder) if config.num_demos else None
        extractor = TripleExtractor(config.lm.build(), encoder, num_demos=config.num_demos,
                                    batch_size=config.batch_size, max_new_tokens=config.max_new_tokens)
        summary = extractor.extract_into(store, passages)
    summary["store"] = store.stats()
    print(json.dumps(summary, indent=2))
    return summary


@dataclass
class TracesConfig:
    data: DataConfig = field(default_factory=DataConfig)  # training questions (data.limit: the first N)
    output: str = "runs/traces/demo/traces.jsonl"
    lm: LMConfig = field(default_factory=LMConfig)
    max_sentences: int = 6


def build_traces(config: TracesConfig) -> dict:
    from datamodules.trigger_traces import collect_traces
    from inference.mind import MindRAG

    benchmark = config.data.load()
    passages = benchmark.passage_by_id()
    mind = MindRAG(config.lm.build(), None, trigger="never", max_sentences=config.max_sentences,
                   record_signals=True)
    return collect_traces(mind, benchmark.questions, passages, config.output)


def build_parser() -> ArgumentParser:
    data = ArgumentParser(description="Write a benchmark as unified questions.jsonl and passages.jsonl")
    data.add_argument("--config", action=ActionConfigFile)
    data.add_class_arguments(DataConfig, "data")
    data.add_argument("--output_dir", type=str, required=True)

    from evaluate import build_parser as evaluate_parser  # index uses evaluate's config, so both agree
    index = evaluate_parser()
    index.description = "Build the retrieval index of a corpus (reused later by evaluate.py)"

    kg = ArgumentParser(description="Extract (or import) the corpus's knowledge triples into a KG store")
    kg.add_argument("--config", action=ActionConfigFile)
    kg.add_class_arguments(KGConfig)

    chains = ArgumentParser(description="Build silver reasoning chains with candidate negatives (chains.jsonl)")
    chains.add_argument("--config", action=ActionConfigFile)
    chains.add_class_arguments(ChainsConfig)
    chains.add_argument("--report", type=bool, default=True, help="print coverage and ground-truth agreement")

    traces = ArgumentParser(description="Closed-book LM traces with labels, to calibrate MIND's trigger and filter")
    traces.add_argument("--config", action=ActionConfigFile)
    traces.add_class_arguments(TracesConfig)

    parser = ArgumentParser(prog="prepare.py", description=__doc__.split("\n")[0], exit_on_error=False)
    commands = parser.add_subcommands()
    commands.add_subcommand("data", data)
    commands.add_subcommand("index", index)
    commands.add_subcommand("kg", kg)
    commands.add_subcommand("chains", chains)
    commands.add_subcommand("traces", traces)
    return parser


def run(cfg) -> None:
    if cfg.subcommand == "data":
        write_unified(dataclass_from(DataConfig, cfg.data.data).load(), cfg.data.output_dir)
    elif cfg.subcommand == "index":
        from evaluate import EvalConfig, build_retriever

        config = dataclass_from(EvalConfig, cfg.index)
        build_retriever(config, config.data.load())
        print(f"index of {config.data.corpus or config.data.questions} is ready in {config.index.cache_dir}")
    elif cfg.subcommand == "kg":
        build_kg(dataclass_from(KGConfig, cfg.kg))
    elif cfg.subcommand == "chains":
        config = dataclass_from(ChainsConfig, cfg.chains)
        print(json.dumps(build_chains_file(config), indent=2))
        if cfg.chains.report:
            print(json.dumps(chain_report(config), indent=2))
    elif cfg.subcommand == "traces":
        print(json.dumps(build_traces(dataclass_from(TracesConfig, cfg.traces)), indent=2))


def main(argv: list[str] | None = None) -> int:
    cfg = build_parser().parse_args(argv)
    return exit_code(lambda: run(cfg))


if __name__ == "__main__":
    sys.exit(main())
