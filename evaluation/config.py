"""`evaluate.py`'s settings: one dataclass per part, each field documented for `--help`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from jsonargparse import ActionConfigFile, ArgumentParser

from core.cli import argument_parser
from core.config import dataclass_from, require_non_negative, require_positive
from datamodules.loaders import DEMO_DIR, DataConfig
from inference.mind import EntityFilter
from inference.retrievers import RetrieverKind
from models.aligner import AlignerModule
from models.encoder import Encoder, EncoderConfig
from models.lm import Attention
from models.lm_config import LMConfig

MethodName = Literal["rag", "rag+rerank", "kirag", "fixed_interval", "dragin", "mind", "kirag+mind"]
METHODS = get_args(MethodName)


@dataclass
class IndexConfig:
    """The dense retriever's FAISS index."""

    type: Literal["flat", "hnsw"] = "flat"
    """`flat`: exact inner product; `hnsw`: approximate"""
    hnsw_m: int = 32
    """HNSW graph degree"""
    ef_search: int = 128
    """HNSW search breadth"""
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """`auto`: the GPU when faiss has GPU support and one is present"""
    cache_dir: str = ".cache/indexes"
    """where indexes are kept, rebuilt only when the corpus or the encoder changes"""

    def __post_init__(self) -> None:
        require_positive(self, "hnsw_m", "ef_search")


@dataclass
class AlignerConfig(EncoderConfig):
    """KiRAG's Aligner: the untrained base encoder, an exported folder, a hub id, or a training `.ckpt`
    (whose own pooling, prefixes and lengths then apply)."""

    max_length: int = 64
    """token limit of triples"""
    query_max_length: int | None = 256
    """token limit of queries"""
    cache_dir: str = ".cache/triple_embeddings"
    """triple embeddings, kept per encoder fingerprint"""

    def build(self) -> Encoder:
        if self.name.endswith(".ckpt"):
            return AlignerModule.from_checkpoint(self.name).encoder.eval()
        return Encoder(self)


@dataclass
class KiRAGConfig:
    """KiRAG's iterative retrieval (paper defaults: K0 = 10, N = 20, L = 5)."""

    kg: str = str(DEMO_DIR / "kg")
    """the KG store folder (`prepare.py kg`)"""
    constructor: bool = False
    """let the LM pick each next triple; false: the Aligner-only mode"""
    k0: int = 10
    """K0: passages retrieved per step"""
    num_candidates: int = 20
    """N: triples kept per step"""
    max_steps: int = 5
    """L: the most steps per question"""
    extract_missing: bool = True
    """extract the triples of passages missing from the KG with the LM"""
    num_demos: int = 2
    """extraction demonstrations per passage"""

    def __post_init__(self) -> None:
        require_positive(self, "k0", "num_candidates", "max_steps")
        require_non_negative(self, "num_demos")


@dataclass
class ReaderConfig:
    """The reader: an LM that answers from a method's top passages."""

    enabled: bool = False
    """answer with the LM from the top passages, for EM/F1"""
    top_k: int = 3
    """passages the reader sees"""
    max_new_tokens: int = 32
    """the longest answer"""
    batch_size: int = 8
    """questions answered together"""

    def __post_init__(self) -> None:
        require_positive(self, "top_k", "max_new_tokens", "batch_size")


@dataclass
class MindConfig:
    """MIND's loop: trigger parameters, entity filter, retrieval and memory."""

    params: str | None = None
    """α, β, γ, δ, threshold saved by the TriggerCalibrator; null: α=β=1, γ=1.0, δ=0.2"""
    fixed_threshold: float = 1.0
    """the `dragin` method's θ, in the units of `attention` (DRAGIN's 0.6-1.5 were set for `sentence`-like)"""
    attention: Attention = "raw"
    """maxAttn of the trigger and the entity confidence: `raw` weights over prompt + text (about
    1/length each) or `sentence`, renormalised over the generated tokens (in [0, 1]); `params` must
    have been calibrated on the same"""
    entity_filter: EntityFilter = "cot+confidence"
    """which entities of a triggered sentence make the sub-query"""
    top_entities: int = 2
    """kept by the confidence filter when `params` set no threshold"""
    retrieve_k: int = 3
    """passages per retrieval"""
    memory_capacity: int = 8
    """facts kept in memory"""
    max_sentences: int = 6
    """the longest reasoning, in sentences"""
    concurrency: int = 1
    """questions run at once, their LM calls generated together (models/batched_calls.py); with more
    than 1 the questions of a step (`batch_size`) are saved together. No faster on 2 CPU cores, where
    prompt prefill dominates (benchmarks/results/mind_speed.md); meant for batch-cheap backends (vLLM)"""

    def __post_init__(self) -> None:
        require_positive(self, "top_entities", "retrieve_k", "memory_capacity", "max_sentences", "concurrency")


@dataclass
class EvalConfig:
    """Evaluate a retrieval method on a benchmark: ranked passages, R@k, EM/F1, calls and latency."""

    data: DataConfig = field(default_factory=DataConfig)
    """the benchmark: questions and corpus"""
    method: MethodName = "rag"
    """the retrieval method"""
    name: str | None = None
    """the method's label in tables; default: built from the settings"""
    retriever: RetrieverKind = "bm25"
    """the passage retriever every method searches with"""
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    """the dense retriever's encoder"""
    index: IndexConfig = field(default_factory=IndexConfig)
    """the dense retriever's FAISS index"""
    kirag: KiRAGConfig = field(default_factory=KiRAGConfig)
    """KiRAG's loop (methods kirag and kirag+mind; rag+rerank takes its kg, k0 and max_steps)"""
    aligner: AlignerConfig = field(default_factory=AlignerConfig)
    """KiRAG's Aligner"""
    lm: LMConfig = field(default_factory=LMConfig)
    """the LM of the Constructor, the reader, MIND and on-demand extraction"""
    reader: ReaderConfig = field(default_factory=ReaderConfig)
    """the reader that answers from a method's top passages"""
    mind: MindConfig = field(default_factory=MindConfig)
    """MIND's loop (methods fixed_interval, dragin, mind, kirag+mind)"""
    top_k: int = 10
    """passages kept per question"""
    batch_size: int = 32
    """questions per step, saved after each (one at a time for unbatched methods: MIND)"""
    output_dir: str = "runs/eval"
    """where predictions.jsonl, metrics.json, metrics.md and run.json go"""
    overwrite: bool = False
    """discard results of a different config in output_dir (only once the new run has loaded)"""

    def __post_init__(self) -> None:
        require_positive(self, "top_k", "batch_size")

    def label(self) -> str:
        """The method's name in tables."""
        if self.name:
            return self.name
        if self.method == "kirag":
            mode = "constructor" if self.kirag.constructor else "aligner-only"
            return f"kirag {mode} ({Path(self.aligner.name).name}, {self.retriever})"
        if self.method in ("mind", "kirag+mind"):
            params = "calibrated" if self.mind.params else "hand-set"
            return f"{self.method} {params}, {self.mind.entity_filter} ({self.retriever})"
        return f"{self.method} ({self.retriever})"


def build_parser() -> ArgumentParser:
    parser = argument_parser(prog="evaluate.py", description="Evaluate a retrieval method on a benchmark",
                             exit_on_error=False)
    parser.add_argument("--config", action=ActionConfigFile, help="YAML config file")
    parser.add_class_arguments(EvalConfig, fail_untyped=True)
    return parser


def parse_config(argv: list[str] | None = None) -> EvalConfig:
    return dataclass_from(EvalConfig, build_parser().parse_args(argv))


def read_run_config(run_file: Path) -> EvalConfig:
    """The config a run saved in its `run.json`."""
    return run_config(json.loads(run_file.read_text()))


def run_config(record: dict) -> EvalConfig:
    """The config of a run record (`run.json`'s content)."""
    return dataclass_from(EvalConfig, build_parser().parse_object(record["config"]))
