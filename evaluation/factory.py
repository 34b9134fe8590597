"""From an `EvalConfig` to a ready `Method`: the retriever, the KG, the Aligner, the LM and the loop."""

from __future__ import annotations

import logging
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
from models.lm.config import LazyLM
from models.lm.interface import LanguageModel
from models.uncertainty import MindParams

log = logging.getLogger(__name__)

KG_METHODS = ("kirag", "kirag+mind")  # the methods that read the KG store

MIND_TRIGGERS: dict[str, Trigger] = {"fixed_interval": "always", "dragin": "fixed", "mind": "dynamic",
                                     "kirag+mind": "dynamic"}


def build_retriever(config: EvalConfig, benchmark: Benchmark) -> Retriever:
    """The retriever of `config` over the benchmark's corpus, its indexes built or found in the cache."""
    kwargs = {}
    if config.retriever in ("dense", "hybrid"):
        index = config.index
        kwargs = dict(encoder=config.encoder.build(), hybrid=config.hybrid, index=index.type, hnsw_m=index.hnsw_m,
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
        r = config.rerank
        depth = r.depth or config.kirag.k0 * config.kirag.max_steps
        rerank = PassageRerank(retriever, passage_scorer(config, r.passage_max_length, passages), k=config.top_k,
                               depth=depth, weight=r.weight)
        return with_reader(config, rerank, lm, passages)
    if config.method == "mdr":
        mdr = MDR(retriever, passages, k=config.top_k, beam=config.mdr.beam, budget=config.mdr.budget)
        return with_reader(config, mdr, lm, passages)
    if config.method == "ircot":
        i = config.ircot
        ircot = IRCoT(retriever, lm, passages, k=config.top_k, retrieve_k=i.k, max_steps=i.max_steps,
                      max_context=i.max_context, max_new_tokens=i.max_new_tokens, budget=i.budget)
        return with_reader(config, ircot, lm, passages)
    search: FactSearch
    if config.method in KG_METHODS:
        k = config.kirag
        existed = Path(k.kg).is_dir()
        store = KGStore(k.kg, create=k.extract_missing)
        extractor = None
        if k.extract_missing:
            extractor = TripleExtractor(lm, num_demos=k.num_demos)
            if notice := extraction_notice(store, benchmark.passages, config.lm.resolved_backend()):
                log.warning("%s%s; the ones retrieval reaches are extracted as it goes", notice,
                            "" if existed else " (the folder did not exist: a new, empty store was made there)")
        kg = KnowledgeGraph(store, extractor, passages)
        triples = TripleIndex(config.aligner.build(), config.aligner.cache_dir)
        constructor = Constructor(lm) if k.constructor else None
        kirag = KiRAG(retriever, kg, triples, constructor, k=config.top_k, k0=k.k0,
                      num_candidates=k.num_candidates, max_steps=k.max_steps,
                      constructor_candidates=k.constructor_candidates, stop=k.stop, ranking=k.ranking,
                      text_scorer=passage_scorer(config, k.ranking.passage_max_length, passages)
                      if k.ranking.scores_text else None)
        if config.method == "kirag":
            return with_reader(config, kirag, lm, passages)
        search = KiRAGSearch(kirag)
    else:
        search = PassageSearch(retriever, passages)
    m = config.mind
    return MindRAG(lm, search, trigger=MIND_TRIGGERS[config.method],
                   params=MindParams.load(m.params) if m.params else None, fixed_threshold=m.fixed_threshold,
                   attention=m.attention,
                   entity_filter=m.entity_filter, top_entities=m.top_entities, retrieve_k=m.retrieve_k,
                   memory_capacity=m.memory_capacity, max_sentences=m.max_sentences, k=config.top_k,
                   concurrency=m.concurrency)


def passage_scorer(config: EvalConfig, passage_max_length: int, passages: dict[str, Passage]) -> PassageScorer:
    """The Aligner's scorer of passage text, its embeddings kept under `aligner.cache_dir` (shared by
    rag+rerank and KiRAG's ranking)."""
    index = EmbeddingIndex(config.aligner.build(passage_max_length=passage_max_length), config.aligner.cache_dir,
                           "passages")
    return PassageScorer(index, passages)


def with_reader(config: EvalConfig, method: Method, lm: LanguageModel, passages: dict[str, Passage]) -> Method:
    """`method` followed by the reader when `reader.enabled` (MIND methods answer by themselves)."""
    if not config.reader.enabled:
        return method
    r = config.reader
    reader = Reader(lm, top_k=r.top_k, max_new_tokens=r.max_new_tokens, batch_size=r.batch_size)
    return ReadingMethod(method, reader, passages)
