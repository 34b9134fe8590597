"""How good a chains file is: coverage, and agreement with the ground truth that questions carry."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence

from core.chains import read_chains
from core.records import read_records
from core.text import token_f1
from core.types import Question
from kg.graph import KnowledgeGraph
from kg.store import KGStore
from training_data.chains import ChainsConfig, build_chains
from training_data.silver_chains import MATCH_F1, Chain, ChainBuilder, contains_answer


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
                matched += any(token_f1(" ".join(triple), t.plain_text) >= MATCH_F1 for t in chain.triples)
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
    kg = KnowledgeGraph(KGStore(config.kg_store, create=False), None, passages)
    began = time.perf_counter()
    search = build_chains(benchmark.questions, passages, kg, ChainBuilder(False, config.beam_size))
    seconds = round(time.perf_counter() - began, 2)
    return {
        "file": coverage(in_file) | agreement([by_id[r.question_id] for r in records], in_file),
        "search": coverage(search) | agreement(benchmark.questions, search) | {"seconds": seconds},
    }
