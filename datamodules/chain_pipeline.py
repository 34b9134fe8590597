"""Build the Aligner's training file `chains.jsonl` (silver chains + mined negatives), and measure it.

Each line is `ChainRecord.to_dict()` plus `source` (evidences | decomposition | search). Lines are
appended and flushed one question at a time; a rerun skips the question ids already written, after
cutting off a partial last line left by a kill. A rerun with another config appends to the same
file, so use a new `output` when the settings change.
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tqdm.auto import tqdm

from datamodules.chains import ChainRecord, read_chains
from datamodules.extraction import KnowledgeGraph, TripleExtractor
from datamodules.kg_store import KGStore
from datamodules.loaders import DataConfig
from datamodules.negatives import mine_negatives
from datamodules.records import DataError, complete_log, read_records
from datamodules.silver_chains import MATCH_F1, Chain, ChainBuilder, contains_answer, spaced, token_f1
from datamodules.types import Passage, Question
from inference.retrievers import make_retriever, passage_text


@dataclass
class ChainsConfig:
    data: DataConfig = field(default_factory=DataConfig)
    kg_store: str = "data/kg"  # the KGStore folder with the corpus triples
    output: str = "data/chains.jsonl"
    retriever: str = "bm25"  # bm25 or dense: finds the K0 passages whose triples are the negatives
    encoder: str = "minilm"  # the dense retriever's encoder
    k0: int = 10
    max_negatives: int = 30  # per chain step
    use_ground_truth: bool = True  # 2Wiki evidences / MuSiQue decompositions before search
    beam_size: int = 32
    seed: int = 0
    index_cache_dir: str | None = ".cache/indexes"
    batch_size: int = 64  # questions whose negatives are retrieved together


def _written_ids(path: Path) -> set[str]:
    """Question ids already in the file; cuts off a partial last line."""
    ids = set()
    for number, line in enumerate(complete_log(path).splitlines(), start=1):
        if line.strip():
            try:
                ids.add(json.loads(line)["question_id"])
            except (json.JSONDecodeError, KeyError, TypeError):
                raise DataError(path, f"line {number}", "not a chains record") from None
    return ids


def build_chains(questions: Sequence[Question], passages: dict[str, Passage], kg: KnowledgeGraph,
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
    kg = KnowledgeGraph(KGStore(config.kg_store), extractor, passages)
    out = Path(config.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = _written_ids(out)
    todo = [q for q in benchmark.questions if q.id not in done]
    counts: Counter = Counter()
    if todo:
        retriever = make_retriever(config.retriever, encoder=config.encoder if config.retriever == "dense" else None)
        retriever.build(benchmark.passages, cache_dir=config.index_cache_dir)
        builder = ChainBuilder(config.use_ground_truth, config.beam_size)
        with open(out, "a", encoding="utf-8") as f, tqdm(total=len(todo), desc="chains", unit="question") as bar:
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
                    counts[chain.source] += 1
                    counts["complete"] += chain.complete
                bar.update(len(batch))
    return {"questions": len(benchmark.questions), "already_written": len(benchmark.questions) - len(todo),
            "written": len(todo), "complete": counts.pop("complete", 0), "by_source": dict(counts),
            "seconds": round(time.perf_counter() - began, 2)}


# -- measuring -----------------------------------------------------------------------------


def coverage(chains: Sequence[Chain]) -> dict:
    """Share of complete chains and mean length, overall and by source."""
    def stats(group: Sequence[Chain]) -> dict:
        n = max(len(group), 1)
        return {"questions": len(group), "complete": round(sum(c.complete for c in group) / n, 4),
                "mean_length": round(sum(len(c.triples) for c in group) / n, 3)}

    by_source = defaultdict(list)
    for c in chains:
        by_source[c.source].append(c)
    return stats(chains) | {"by_source": {s: stats(g) for s, g in sorted(by_source.items())}}


def agreement(questions: Sequence[Question], chains: Sequence[Chain]) -> dict:
    """How well chains agree with the ground truth that the questions carry.

    `gold_triples`: share of gold triples matched (token F1 >= 0.5) by some chain triple.
    `decomposition`: share of hops whose sub-answer (the answer and aliases at the last hop) is in
    the chain triple at that hop, and in any chain triple.
    """
    gold = matched = hops = at_hop = anywhere = 0
    with_gold = with_steps = 0
    for question, chain in zip(questions, chains, strict=True):
        if question.gold_triples:
            with_gold += 1
            for triple in question.gold_triples:
                gold += 1
                matched += any(token_f1(" ".join(triple), spaced(t)) >= MATCH_F1 for t in chain.triples)
        steps = question.decomposition
        if steps:
            with_steps += 1
            for j, step in enumerate(steps):
                answers = [str(step.get("answer", ""))] + (question.answers if j == len(steps) - 1 else [])
                hops += 1
                at_hop += j < len(chain.triples) and contains_answer(chain.triples[j], answers)
                anywhere += any(contains_answer(t, answers) for t in chain.triples)
    result = {}
    if gold:
        result["gold_triples"] = {"questions": with_gold, "triples": gold, "matched": round(matched / gold, 4)}
    if hops:
        result["decomposition"] = {"questions": with_steps, "hops": hops, "at_hop": round(at_hop / hops, 4),
                                   "anywhere": round(anywhere / hops, 4)}
    return result


def chain_report(config: ChainsConfig) -> dict:
    """Coverage and ground-truth agreement of the chains file, and of search-only chains (built here).

    The search figures tell how good chains are where no ground truth exists (HotpotQA).
    """
    benchmark = config.data.load()
    by_id = {q.id: q for q in benchmark.questions}
    records = read_chains(config.output)  # validates; `source` is read from the raw lines
    sources = {r["question_id"]: r.get("source", "") for _, r in read_records(config.output)}
    records = [r for r in records if r.question_id in by_id]
    in_file = [Chain(list(r.chain), sources[r.question_id], r.ordered, r.complete) for r in records]
    passages = benchmark.passage_by_id()
    kg = KnowledgeGraph(KGStore(config.kg_store), None, passages)
    began = time.perf_counter()
    search = build_chains(benchmark.questions, passages, kg, ChainBuilder(False, config.beam_size))
    seconds = round(time.perf_counter() - began, 2)
    return {
        "file": coverage(in_file) | agreement([by_id[r.question_id] for r in records], in_file),
        "search": coverage(search) | agreement(benchmark.questions, search) | {"seconds": seconds},
    }
