"""`prepare.py chains`: the Aligner's training file `chains.jsonl` (silver chains + mined negatives,
`training_data/negatives.py`: sampled from the inference retriever's passages, or the hardest by a
trained Aligner).

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
from core.config import ConfigError, require_positive
from core.records import DataError, append_log, check_settings, content_digest, exclusive_output, log_records, write_atomic
from core.records import field as record_field
from core.types import Passage, Question
from datamodules.loaders import DataConfig
from inference.embedding_index import TripleIndex
from inference.retrievers import Retriever, RetrieverKind, make_retriever, passage_text
from kg.extraction import TripleExtractor
from kg.graph import KnowledgeGraph, TripleSource
from kg.store import KGStore
from models.aligner import checkpoint_encoder
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
    """finds the K0 passages whose triples are the negatives. BM25, as the Aligner of kirag_validation.md was trained;
    `dense` (with `encoder`), the retriever KiRAG searches with at inference, is an ablation not yet
    decided on validation (configs/recipes/ablations/dense_negatives.yaml)"""
    negatives_from: Literal["corpus", "store"] = "corpus"
    """where the retriever searches: the whole corpus, or only the passages the KG store holds (a KG
    extracted for the gold passages alone: the negatives are then other questions' gold passages)"""
    encoder: str = "minilm"
    """the encoder of dense retrieval (retrievers `dense` and `hybrid`)"""
    k0: int = 10
    """passages retrieved per chain step"""
    max_negatives: int = 30
    """negatives kept per chain step: a seeded uniform sample, or the hardest by `negatives_scorer`"""
    negatives_scorer: str | None = None
    """a trained Aligner (a `train.py` .ckpt) whose highest-scoring triples of each step's candidates, those
    equivalent to a chain triple left out, are the negatives (a second round of hard negatives, as in
    ANCE); null: a seeded uniform sample of the candidates"""
    use_ground_truth: bool = True
    """build from 2Wiki evidences / MuSiQue decompositions before searching"""
    beam_size: int = 32
    """the chain search's beam"""
    seed: int = 0
    """seeds the negatives' sample"""
    index_cache_dir: str | None = ".cache/indexes"
    """where retrieval indexes are cached; null: not cached"""
    embedding_cache_dir: str | None = ".cache/triple_embeddings"
    """where `negatives_scorer`'s triple embeddings are kept (per encoder fingerprint, shared with
    evaluate.py's `aligner.cache_dir`); null: not kept"""
    batch_size: int = 64
    """questions whose negatives are retrieved together"""
    overwrite: bool = False
    """replace a chains file made with other settings"""

    def __post_init__(self) -> None:
        require_positive(self, "k0", "max_negatives", "beam_size", "batch_size")
        if self.negatives_scorer is not None:
            if not self.negatives_scorer.endswith(".ckpt"):
                raise ConfigError("negatives_scorer", f"must be a train.py checkpoint (.ckpt), got {self.negatives_scorer}")
            if not Path(self.negatives_scorer).is_file():
                raise ConfigError("negatives_scorer", f"names {self.negatives_scorer}, which is not a file: train the "
                                                      "Aligner that mines the negatives first")

    def settings(self) -> dict:
        """What decides each question's chain: every setting but where chains go, how they are batched,
        and which slice of the questions a run covers (a later run may add questions); with a
        `negatives_scorer`, its content digest too (a retrained checkpoint keeps its path)."""
        settings = {k: v for k, v in asdict(self).items()
                    if k not in ("output", "index_cache_dir", "embedding_cache_dir", "batch_size", "overwrite")}
        settings["data"] = {k: v for k, v in settings["data"].items() if k not in ("limit", "offset")}
        if self.negatives_scorer is None:
            del settings["negatives_scorer"]  # the records of chains made before it existed still match
        else:
            settings["negatives_scorer_digest"] = content_digest(self.negatives_scorer)
        return settings


def pending_questions(config: ChainsConfig) -> tuple[list[str], int]:
    """The ids of the questions `build_chains_file` still has to write, and how many questions there are:
    all of them with `overwrite`, or when the output was made with other settings (the run says which)."""
    questions = config.data.load().questions
    out = Path(config.output)
    written: set[str] = set()
    if out.is_file() and not config.overwrite:
        with exclusive_output(out, is_folder=False):  # not while another run appends to it
            try:
                check_settings(_settings_record(out), config.settings(), out, overwrite=False)
                written = _written_ids(out)
            except ValueError:
                pass
    return [q.id for q in questions if q.id not in written], len(questions)


def _settings_record(out: Path) -> Path:
    """The file beside a chains file that holds the settings that made it."""
    return out.with_name(out.name.split(".")[0] + ".run.json")


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
    record = _settings_record(out)
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
            retriever = make_retriever(config.retriever, encoder=config.encoder)  # bm25 needs none
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
    scorer = None
    if config.negatives_scorer is not None:
        scorer = TripleIndex(checkpoint_encoder(config.negatives_scorer), config.embedding_cache_dir)
    with append_log(out) as f, tqdm(total=len(todo), desc="chains", unit="question") as bar:
        for start in range(0, len(todo), config.batch_size):
            batch = todo[start : start + config.batch_size]
            chains = build_chains(batch, passages, kg, builder)
            negatives = mine_negatives([(q.id, q.question, c.triples) for q, c in zip(batch, chains)],
                                       retriever, kg, config.k0, config.max_negatives, config.seed, scorer)
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
