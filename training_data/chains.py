"""`prepare.py chains`: the Aligner's training file `chains.jsonl` (silver chains + mined negatives).

Each line is `ChainRecord.to_dict()` plus `source` (evidences | decomposition | search). Lines are
appended and fsynced one question at a time; a rerun skips the question ids already written, and
cuts off a partial last line left by a kill before it appends. The settings are kept beside the file
(`chains.run.json`): a rerun with other settings is refused unless `overwrite`.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from tqdm.auto import tqdm

from core.chains import ChainRecord
from core.config import require_positive
from core.records import DataError, append_log, check_settings, exclusive_output, log_records, write_atomic
from core.records import field as record_field
from core.types import Passage, Question
from datamodules.loaders import DataConfig
from inference.retrievers import Retriever, RetrieverKind, make_retriever, passage_text
from kg.extraction import TripleExtractor
from kg.graph import KnowledgeGraph, TripleSource
from kg.store import KGStore
from training_data.negatives import mine_negatives
from training_data.silver_chains import Chain, ChainBuilder


@dataclass
class ChainsConfig:
    """Silver chains with candidate negatives for the training questions of `data`."""

    data: DataConfig = field(default_factory=DataConfig)
    """the training questions and their corpus"""
    kg_store: str = "data/kg"
    """the KG store folder with the corpus triples (`prepare.py kg`)"""
    output: str = "data/chains.jsonl"
    """the chains file to write; a rerun skips the questions already in it"""
    retriever: RetrieverKind = "bm25"
    """finds the K0 passages whose triples are the negatives"""
    negatives_from: Literal["corpus", "store"] = "corpus"
    """where the retriever searches: the whole corpus, or only the passages the KG store holds (a KG
    extracted for the gold passages alone: the negatives are then other questions' gold passages)"""
    encoder: str = "minilm"
    """the dense retriever's encoder"""
    k0: int = 10
    """passages retrieved per chain step"""
    max_negatives: int = 30
    """negatives kept per chain step (a seeded uniform sample)"""
    use_ground_truth: bool = True
    """build from 2Wiki evidences / MuSiQue decompositions before searching"""
    beam_size: int = 32
    """the chain search's beam"""
    seed: int = 0
    """seeds the negatives' sample"""
    index_cache_dir: str | None = ".cache/indexes"
    """where retrieval indexes are cached; null: not cached"""
    batch_size: int = 64
    """questions whose negatives are retrieved together"""
    overwrite: bool = False
    """replace a chains file made with other settings"""

    def __post_init__(self) -> None:
        require_positive(self, "k0", "max_negatives", "beam_size", "batch_size")

    def settings(self) -> dict:
        """What decides each question's chain: every setting but where chains go, how they are batched,
        and which slice of the questions a run covers (a later run may add questions)."""
        settings = {k: v for k, v in asdict(self).items()
                    if k not in ("output", "index_cache_dir", "batch_size", "overwrite")}
        settings["data"] = {k: v for k, v in settings["data"].items() if k not in ("limit", "offset")}
        return settings


def _written_ids(path: Path) -> set[str]:
    """Question ids already in the file (a partial last line left by a kill is not one)."""
    return {record_field(record, "question_id", str, path, where) for where, record in log_records(path)}


def _searched(passages: list[Passage], store: KGStore, config: ChainsConfig) -> list[Passage]:
    """The passages negatives are retrieved from."""
    if config.negatives_from == "corpus":
        return passages
    missing = set(store.missing([p.id for p in passages]))
    kept = [p for p in passages if p.id not in missing]
    if not kept:
        raise DataError(config.kg_store, None, "the KG store holds none of the corpus passages (negatives_from: store)")
    return kept


def build_chains(questions: Sequence[Question], passages: dict[str, Passage], kg: TripleSource,
                 builder: ChainBuilder) -> list[Chain]:
    """A chain per question from its gold passages' triples (`passages`: the corpus by id)."""
    chains = []
    for q in questions:
        texts = {pid: passage_text(passages[pid]) for pid in q.gold_passage_ids}
        chains.append(builder.build(q, kg.get_many(q.gold_passage_ids), texts))
    return chains


def build_chains_file(config: ChainsConfig, extractor: TripleExtractor | None = None) -> dict:
    """Write a chain and its negatives for every question not in `config.output` yet; returns counts.

    Without `extractor`, every gold or retrieved passage must already be in the store.
    """
    began = time.perf_counter()
    benchmark = config.data.load()
    passages = benchmark.passage_by_id()
    store = KGStore(config.kg_store, create=extractor is not None)
    kg = KnowledgeGraph(store, extractor, passages)
    out = Path(config.output)
    record = out.with_name(out.name.split(".")[0] + ".run.json")
    settings = config.settings()
    with exclusive_output(out, is_folder=False):
        check_settings(record, settings, out, config.overwrite)
        done = set() if config.overwrite else _written_ids(out)
        todo = [q for q in benchmark.questions if q.id not in done]
        if extractor is None and (missing := store.missing(p for q in todo for p in q.gold_passage_ids)):
            first = next(q for q in todo if missing[0] in q.gold_passage_ids)
            raise DataError(config.kg_store, None, f"{len(missing)} gold passages of the questions to write have no "
                                                   f"triples (first: {missing[0]}, of question {first.id}): build "
                                                   "the KG of these questions first with `prepare.py kg`")
        retriever = None
        if todo:
            retriever = make_retriever(config.retriever,
                                       encoder=config.encoder if config.retriever == "dense" else None)
            retriever.build(_searched(benchmark.passages, store, config), cache_dir=config.index_cache_dir)
        if config.overwrite:
            out.unlink(missing_ok=True)
        write_atomic(record, json.dumps(settings, indent=2) + "\n")
        counts = _write_chains(todo, passages, kg, retriever, config, out) if todo else Counter()
    return {"questions": len(benchmark.questions), "already_written": len(benchmark.questions) - len(todo),
            "written": len(todo), "complete": counts.pop("complete", 0), "by_source": dict(counts),
            "seconds": round(time.perf_counter() - began, 2)}


def _write_chains(todo: list[Question], passages: dict[str, Passage], kg: TripleSource, retriever: Retriever,
                  config: ChainsConfig, out: Path) -> Counter:
    """Build and append the chains of `todo` in batches, one fsynced line per question; returns counts."""
    counts: Counter = Counter()
    builder = ChainBuilder(config.use_ground_truth, config.beam_size)
    with append_log(out) as f, tqdm(total=len(todo), desc="chains", unit="question") as bar:
        for start in range(0, len(todo), config.batch_size):
            batch = todo[start : start + config.batch_size]
            chains = build_chains(batch, passages, kg, builder)
            negatives = mine_negatives([(q.id, q.question, c.triples) for q, c in zip(batch, chains)],
                                       retriever, kg, config.k0, config.max_negatives, config.seed)
            for question, chain, negs in zip(batch, chains, negatives):
                record = ChainRecord(question.id, question.question, question.type, chain.ordered,
                                     chain.complete, tuple(chain.triples), tuple(tuple(n) for n in negs))
                f.write(json.dumps(record.to_dict() | {"source": chain.source}, ensure_ascii=False) + "\n")
                f.flush()
                os.fsync(f.fileno())
                counts[chain.source] += 1
                counts["complete"] += chain.complete
            bar.update(len(batch))
    return counts
