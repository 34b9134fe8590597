"""`evaluate.py`'s settings: one dataclass per part, each field documented for `--help`. A method's own
settings are the dataclass beside it in inference/ (`MindSettings`, `KiRAGSettings`, ...), used here as
they are or extended only by what the factory (`evaluation/factory.py`) builds or loads around the method."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from jsonargparse import ActionConfigFile, ArgumentParser

from core.cli import argument_parser
from core.config import ConfigError, dataclass_from, require_non_negative, require_positive
from datamodules.loaders import DEMO_DIR, DataConfig
from inference.ircot import IRCoTSettings
from inference.kirag import KiRAGSettings
from inference.mdr import MDRSettings
from inference.mind import MindSettings
from inference.reader import ReaderSettings
from inference.rerank import RerankSettings
from inference.retrievers import HybridConfig, RetrieverKind
from models.encoder import EncoderConfig
from models.lm.config import LMConfig

MethodName = Literal["rag", "rag+rerank", "mdr", "ircot", "kirag", "fixed_interval", "random_trigger", "dragin", "mind",
                     "kirag+mind"]
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
    """triple embeddings (and rag+rerank's passage embeddings), kept per encoder fingerprint"""


@dataclass
class KiRAGConfig(KiRAGSettings):
    """KiRAG's loop (inference/kirag.py), and the KG and Constructor it runs with."""

    kg: str = str(DEMO_DIR / "kg")
    """the KG store folder (`prepare.py kg`)"""
    constructor: bool = False
    """let the LM pick each next triple; false: the Aligner-only mode"""
    extract_missing: bool = True
    """extract the triples of passages missing from the KG with the LM"""
    num_demos: int = 2
    """extraction demonstrations per passage"""

    def __post_init__(self) -> None:
        super().__post_init__()
        require_non_negative(self, "num_demos")


@dataclass
class ReaderConfig(ReaderSettings):
    """The reader (inference/reader.py): an LM that answers from a method's top passages."""

    enabled: bool = False
    """answer with the LM from the top passages, for EM/F1"""


@dataclass
class MindConfig(MindSettings):
    """MIND's loop (inference/mind.py), and the trigger parameters it loads."""

    params: str | None = None
    """α, β, γ, δ, threshold saved by the TriggerCalibrator; null: α=β=1, γ=1.0, δ=0.2"""


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
    """the passage retriever every method searches with: `bm25`, `dense`, or `hybrid` (the two fused
    by reciprocal rank); `mdr` needs `dense`"""
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    """the dense retriever's encoder (retrievers dense and hybrid)"""
    index: IndexConfig = field(default_factory=IndexConfig)
    """the dense retriever's FAISS index (retrievers dense and hybrid)"""
    hybrid: HybridConfig = field(default_factory=HybridConfig)
    """the hybrid retriever's fusion"""
    kirag: KiRAGConfig = field(default_factory=KiRAGConfig)
    """KiRAG's loop (methods kirag and kirag+mind; rag+rerank's default depth is its k0 × max_steps)"""
    rerank: RerankSettings = field(default_factory=RerankSettings)
    """the rag+rerank baseline: one retrieval, reranked by the Aligner's score of the passage text"""
    mdr: MDRSettings = field(default_factory=MDRSettings)
    """the mdr baseline: two-hop dense retrieval without an LLM"""
    ircot: IRCoTSettings = field(default_factory=IRCoTSettings)
    """the ircot baseline: retrieval interleaved with the LM's chain of thought (EM/F1 from `reader.enabled`)"""
    aligner: AlignerConfig = field(default_factory=AlignerConfig)
    """KiRAG's Aligner (also rag+rerank's)"""
    lm: LMConfig = field(default_factory=LMConfig)
    """the LM of the Constructor, the reader, MIND, IRCoT and on-demand extraction"""
    reader: ReaderConfig = field(default_factory=ReaderConfig)
    """the reader that answers from a method's top passages"""
    mind: MindConfig = field(default_factory=MindConfig)
    """MIND's loop (methods fixed_interval, random_trigger, dragin, mind, kirag+mind)"""
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
        if self.method == "mdr" and self.retriever != "dense":
            raise ConfigError("retriever", f"must be 'dense' for method mdr (its path scores add inner products), "
                                           f"got {self.retriever!r}")

    def label(self) -> str:
        """The method's name in tables."""
        if self.name:
            return self.name
        if self.method == "kirag":
            k, r = self.kirag, self.kirag.ranking
            options = ["constructor" if k.constructor else "aligner-only"]
            if k.constructor and k.constructor_candidates:
                options.append(f"top {k.constructor_candidates} to the LM")
            if k.constructor and k.stop != "constructor":
                options.append(f"stop {k.stop}")
            if not r.triples_only:
                options.append(f"ranking {r.triple_weight:g}/{r.retrieval_weight:g}/{r.text_weight:g}"
                               + (f" (text against the {r.text_query})" if r.text_weight and r.text_query != "question"
                                  else ""))
            return f"kirag {', '.join(options)} ({Path(self.aligner.name).name}, {self.retriever})"
        if self.method in ("mind", "kirag+mind"):
            m = self.mind
            options = ["calibrated" if m.params else "hand-set", m.entity_filter]
            if m.threshold_scale != 1:
                options.append(f"θ x{m.threshold_scale:g}")
            if m.entity_signals != "reasoning":
                options.append(f"{m.entity_signals} signals")
            if m.subquery != "entities":
                options.append(f"{m.subquery} sub-query")
            return f"{self.method} {', '.join(options)} ({self.retriever})"
        if self.method == "dragin":
            return f"dragin θ {self.mind.fixed_threshold:g} ({self.retriever})"
        if self.method == "random_trigger":
            return f"random_trigger rate {self.mind.random_rate:g} seed {self.mind.seed} ({self.retriever})"
        if self.method == "rag+rerank":
            return f"rag+rerank weight {self.rerank.weight:g} ({Path(self.aligner.name).name}, {self.retriever})"
        budget = {"mdr": self.mdr.budget, "ircot": self.ircot.budget}.get(self.method)
        return f"{self.method}{f' budget {budget}' if budget else ''} ({self.retriever})"


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
