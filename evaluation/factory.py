"""From an `EvalConfig` to a ready `Method`: the retriever, the KG, the Aligner, the LM and the loop."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from core.types import Passage
from datamodules.loaders import Benchmark
from evaluation.config import METHODS, EvalConfig
from inference.constructor import Constructor
from inference.embedding_index import EmbeddingIndex, TripleIndex
from inference.ircot import IRCoT
from inference.kirag import KiRAG
from inference.mdr import MDR
from inference.methods import Method, SingleShotRAG
from inference.mind import FactSearch, KiRAGSearch, MindRAG, PassageSearch, Trigger
from inference.reader import Reader, ReadingMethod
from inference.rerank import PassageRerank, PassageScorer
from inference.retrievers import Retriever, make_retriever
from kg.extraction import TripleExtractor, extraction_notice
from kg.graph import KnowledgeGraph
from kg.store import KGStore
from models.aligner import checkpoint_encoder
from models.encoder import Encoder
from models.lm.config import LazyLM
from models.lm.interface import LanguageModel
from models.uncertainty import MindParams

log = logging.getLogger(__name__)

KG_METHODS = ("kirag", "kirag+mind")  # the methods that read the KG store

MIND_TRIGGERS: dict[str, Trigger] = {"fixed_interval": "always", "random_trigger": "random", "dragin": "fixed",
                                     "mind": "dynamic", "kirag+mind": "dynamic"}


def build_retriever(config: EvalConfig, benchmark: Benchmark) -> Retriever:
    """The retriever of `config` over the benchmark's corpus, its indexes built or found in the cache."""
    kwargs = {}
    if config.retriever in ("dense", "hybrid"):
        index = config.index
        kwargs = dict(encoder=Encoder(config.encoder), hybrid=config.hybrid, index=index.type, hnsw_m=index.hnsw_m,
                      ef_search=index.ef_search, device=index.device)
    retriever = make_retriever(config.retriever, **kwargs)
    retriever.build(benchmark.passages, cache_dir=config.index.cache_dir)
    return retriever


def build_method(config: EvalConfig, benchmark: Benchmark) -> Method:
    if config.method not in METHODS:
        raise ValueError(f"unknown method '{config.method}'; known methods: {', '.join(METHODS)}")
    retriever = build_retriever(config, benchmark)
    lm = LazyLM(config.lm)
    passages = benchmark.passage_by_id()
    if config.method == "rag":
        return with_reader(config, SingleShotRAG(retriever, k=config.top_k), lm, passages)
    if config.method == "rag+rerank":
        rerank = replace(config.rerank, depth=config.rerank.depth or config.kirag.k0 * config.kirag.max_steps)
        scorer = passage_scorer(config, rerank.passage_max_length, passages)
        return with_reader(config, PassageRerank(retriever, scorer, rerank, k=config.top_k), lm, passages)
    if config.method == "mdr":
        return with_reader(config, MDR(retriever, passages, config.mdr, k=config.top_k), lm, passages)
    if config.method == "ircot":
        return with_reader(config, IRCoT(retriever, lm, passages, config.ircot, k=config.top_k), lm, passages)
    search: FactSearch
    if config.method in KG_METHODS:
        settings = config.kirag
        existed = Path(settings.kg).is_dir()
        store = KGStore(settings.kg, create=settings.extract_missing)
        extractor = None
        if settings.extract_missing:
            extractor = TripleExtractor(lm, num_demos=settings.num_demos)
            if notice := extraction_notice(store, benchmark.passages, config.lm.resolved_backend()):
                log.warning("%s%s; the ones retrieval reaches are extracted as it goes", notice,
                            "" if existed else " (the folder did not exist: a new, empty store was made there)")
        kg = KnowledgeGraph(store, extractor, passages)
        triples = TripleIndex(aligner_encoder(config), config.aligner.cache_dir)
        constructor = Constructor(lm) if settings.constructor else None
        ranking = settings.ranking
        text_scorer = passage_scorer(config, ranking.passage_max_length, passages) if ranking.scores_any_text else None
        kirag = KiRAG(retriever, kg, triples, constructor, settings, k=config.top_k, text_scorer=text_scorer)
        if config.method == "kirag":
            return with_reader(config, kirag, lm, passages)
        search = KiRAGSearch(kirag)
    else:
        search = PassageSearch(retriever, passages)
    params = MindParams.load(config.mind.params) if config.mind.params else None
    mind = MindRAG(lm, search, trigger=MIND_TRIGGERS[config.method], params=params, settings=config.mind,
                   k=config.top_k)
    return with_reader(config, mind, lm, passages)


def aligner_encoder(config: EvalConfig, passage_max_length: int | None = None) -> Encoder:
    """KiRAG's Aligner (`aligner.name`: a `train.py` checkpoint, whose own pooling, prefixes and lengths then
    apply, or an encoder); `passage_max_length` replaces its token limit of passages (`max_length`, that of
    triples), for embedding passages."""
    name = config.aligner.name
    encoder = checkpoint_encoder(name) if name.endswith(".ckpt") else Encoder(config.aligner)
    if passage_max_length is not None:
        encoder.max_lengths["passage"] = passage_max_length  # the fingerprint includes it
    return encoder


def passage_scorer(config: EvalConfig, passage_max_length: int, passages: dict[str, Passage]) -> PassageScorer:
    """The Aligner's scorer of passage text, its embeddings kept under `aligner.cache_dir` (shared by
    rag+rerank and KiRAG's ranking)."""
    index = EmbeddingIndex(aligner_encoder(config, passage_max_length), config.aligner.cache_dir, "passages")
    return PassageScorer(index, passages)


def with_reader(config: EvalConfig, method: Method, lm: LanguageModel, passages: dict[str, Passage]) -> Method:
    """`method` followed by the reader when `reader.enabled`: for MIND's methods too, whose own generated
    answer it replaces, so that every method answers in the same way from what it retrieved."""
    if not config.reader.enabled:
        return method
    return ReadingMethod(method, Reader(lm, config.reader), passages)
