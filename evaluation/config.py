"""`evaluate.py`'s settings: one dataclass per part, each field documented for `--help`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from jsonargparse import ActionConfigFile, ArgumentParser

from core.cli import argument_parser
from core.config import ConfigError, dataclass_from, require_non_negative, require_positive
from datamodules.loaders import DEMO_DIR, DataConfig
from inference.kirag import StopPolicy
from inference.kirag_ranking import RankingConfig
from inference.mind import EntityFilter
from inference.retrievers import HybridConfig, RetrieverKind
from models.aligner import AlignerModule
from models.encoder import Encoder, EncoderConfig
from models.lm.config import LMConfig
from models.lm.interface import Attention

MethodName = Literal["rag", "rag+rerank", "mdr", "ircot", "kirag", "fixed_interval", "dragin", "mind", "kirag+mind"]
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

    def build(self, passage_max_length: int | None = None) -> Encoder:
        """The encoder; `passage_max_length` replaces its token limit of passages (`max_length`, that of
        triples), for embedding passages."""
        if self.name.endswith(".ckpt"):
            encoder = AlignerModule.from_checkpoint(self.name).encoder.eval()
        else:
            encoder = Encoder(self)
        if passage_max_length is not None:
            encoder.max_lengths["passage"] = passage_max_length  # the fingerprint includes it
        return encoder


@dataclass
class KiRAGConfig:
    """KiRAG's iterative retrieval (paper defaults: K0 = 10, N = 20, L = 5; inference/kirag.py)."""

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
    constructor_candidates: int | None = None
    """the Constructor sees only the Aligner's best this many of the N candidates; null: all N (the paper)"""
    stop: StopPolicy = "constructor"
    """when a Constructor's chain ends before L steps (never at its first step): `constructor` (the paper)
    when the LM finds it complete, an answer without a new triple included; `answer_in_chain` only when the
    chain's last triple's tail is named by the LM's answer line"""
    ranking: RankingConfig = field(default_factory=RankingConfig)
    """the document ranking: the paper's best-triple rule, or fused with retriever and passage-text scores"""
    extract_missing: bool = True
    """extract the triples of passages missing from the KG with the LM"""
    num_demos: int = 2
    """extraction demonstrations per passage"""

    def __post_init__(self) -> None:
        require_positive(self, "k0", "num_candidates", "max_steps", "constructor_candidates")
        require_non_negative(self, "num_demos")
        if self.constructor_candidates is not None and self.constructor_candidates > self.num_candidates:
            raise ConfigError("constructor_candidates", f"must be at most num_candidates ({self.num_candidates}), "
                                                        f"got {self.constructor_candidates}")


@dataclass
class RerankConfig:
    """`rag+rerank`: one retrieval of `depth` passages, ranked by (1 - weight) · retriever score + weight ·
    Aligner score of the passage text, each min-max normalised over the question's passages (inference/rerank.py)."""

    depth: int | None = None
    """passages retrieved and reranked (the `retrieved` pool); null: KiRAG's K0·L (`kirag.k0` × `kirag.max_steps`)"""
    weight: float = 0.5
    """the Aligner's share of the fused score: 0 keeps the retriever's order, 1 is the Aligner's"""
    passage_max_length: int = 256
    """the Aligner's token limit of passages ("title. text")"""

    def __post_init__(self) -> None:
        require_positive(self, "depth", "passage_max_length")
        if not 0 <= self.weight <= 1:
            raise ConfigError("weight", f"must be in [0, 1], got {self.weight}")


@dataclass
class MDRConfig:
    """`mdr`: two-hop dense retrieval without an LLM, paths scored s1 + s2 (inference/mdr.py)."""

    beam: int = 5
    """hop-1 passages expanded, and hop-2 passages kept per expansion (1 + beam searches)"""
    budget: int | None = None
    """the most distinct passages retrieved (the `retrieved` pool, and the ranking); null: every passage
    of the beam² paths"""

    def __post_init__(self) -> None:
        require_positive(self, "beam", "budget")


@dataclass
class IRCoTConfig:
    """`ircot`: retrieval interleaved with the LM's chain of thought (inference/ircot.py); its answer
    for EM/F1 comes from the reader (`reader.enabled`)."""

    k: int = 4
    """passages retrieved per search (the question's, then each sentence's)"""
    max_steps: int = 5
    """L: the most sentences of reasoning per question"""
    max_context: int = 15
    """the most passages the LM reads at a step (the most recently collected)"""
    max_new_tokens: int = 64
    """the longest generation for one sentence"""
    budget: int | None = None
    """the most distinct passages collected (the `retrieved` pool); null: no cap"""

    def __post_init__(self) -> None:
        require_positive(self, "k", "max_steps", "max_context", "max_new_tokens", "budget")


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
    """questions run at once, their LM calls generated together (models/lm/batching.py); with more
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
    rerank: RerankConfig = field(default_factory=RerankConfig)
    """the rag+rerank baseline"""
    mdr: MDRConfig = field(default_factory=MDRConfig)
    """the mdr baseline"""
    ircot: IRCoTConfig = field(default_factory=IRCoTConfig)
    """the ircot baseline"""
    aligner: AlignerConfig = field(default_factory=AlignerConfig)
    """KiRAG's Aligner (also rag+rerank's)"""
    lm: LMConfig = field(default_factory=LMConfig)
    """the LM of the Constructor, the reader, MIND, IRCoT and on-demand extraction"""
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
                options.append(f"ranking {r.triple_weight:g}/{r.retrieval_weight:g}/{r.text_weight:g}")
            return f"kirag {', '.join(options)} ({Path(self.aligner.name).name}, {self.retriever})"
        if self.method in ("mind", "kirag+mind"):
            params = "calibrated" if self.mind.params else "hand-set"
            return f"{self.method} {params}, {self.mind.entity_filter} ({self.retriever})"
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
