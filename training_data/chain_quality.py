"""How good a chains file is: coverage, and agreement with the ground truth that questions carry.

`recovery` measures, question by question, how much of the gold chain a built chain recovers (the
figures of `benchmarks/silver_chains.py`). A question's gold chain is a list of hops:

- MuSiQue (`decomposition`): hop j is sub-question q_j with sub-answer a_j (at the last hop, the
  answer and its aliases too). A triple recovers hop j when it contains a_j (`contains_answer`:
  in its head or tail as a word sequence, or token F1 >= 0.8 with one of them).
- 2Wiki (`gold_triples`, its `evidences`): hop j is gold triple j. A triple recovers it when its
  `head relation tail` has token F1 >= 0.5 (`MATCH_F1`) with the gold triple's words.

The gold order is the hops' order, except for comparison and (2Wiki) bridge_comparison questions,
whose hops are not a path (two films, then their directors): there the order is free.
"""

from __future__ import annotations

import itertools
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from core.chains import read_chains
from core.records import read_records
from core.text import token_f1
from core.types import Question, Triple
from kg.graph import KnowledgeGraph
from kg.store import KGStore
from training_data.chains import ChainsConfig, build_chains
from training_data.silver_chains import MATCH_F1, Chain, ChainBuilder, Pool, contains_answer

UNORDERED_GOLD = frozenset({"comparison", "bridge_comparison"})
"""Question types whose gold hops are not a path, so a chain may take them in any order."""


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


def gold_hops(question: Question) -> tuple[list[Callable[[Triple], bool]], bool]:
    """(one test per gold hop: does a triple recover it?, whether the hops' order counts); no hops
    when the question carries no ground truth. Sub-answers come first, as the builder's do."""
    if question.decomposition:
        steps = question.decomposition
        answers = [[str(s.get("answer", ""))] + (question.answers if j == len(steps) - 1 else [])
                   for j, s in enumerate(steps)]
        hops = [lambda t, a=a: contains_answer(t, a) for a in answers]
    elif question.gold_triples:
        golds = [" ".join(g) for g in question.gold_triples]
        hops = [lambda t, g=g: token_f1(g, t.plain_text) >= MATCH_F1 for g in golds]
    else:
        hops = []
    return hops, question.type not in UNORDERED_GOLD


def recovery(question: Question, chain: Chain, pool: Pool, reference: Chain | None = None) -> dict | None:
    """How much of the question's gold chain `chain` recovers; None without ground truth.

    Per hop j (lists, one item per hop):
      `at_hop`: the chain's j-th triple recovers hop j (order-free questions: any chain triple does);
      `anywhere`: some chain triple recovers it;
      `in_triples`: some triple of the gold passages (`pool`) recovers it: the ceiling the triples set;
      `same_as_reference`: the chain's j-th triple is the reference chain's j-th (the same fact).
    Per question:
      `exact`: the chain has one triple per hop and they recover the hops in order (order-free
      questions: in some order, each triple its own hop);
      `all_anywhere`: every hop is recovered by some chain triple;
      `all_in_triples`: every hop is recovered by some triple of the gold passages;
      `ends_in_answer`: the last chain triple contains the answer (or an alias);
      `complete`: the builder's own flag.
    """
    hops, ordered = gold_hops(question)
    if not hops:
        return None
    triples = chain.triples
    everything = [t for ts in pool.values() for t in ts]
    anywhere = [any(hop(t) for t in triples) for hop in hops]
    if ordered:
        at_hop = [j < len(triples) and hop(triples[j]) for j, hop in enumerate(hops)]
        exact = len(triples) == len(hops) and all(at_hop)
    else:
        at_hop = anywhere
        exact = len(triples) == len(hops) and any(
            all(hop(t) for hop, t in zip(hops, order)) for order in itertools.permutations(triples))
    in_triples = [any(hop(t) for t in everything) for hop in hops]
    record = {
        "hops": len(hops), "at_hop": at_hop, "anywhere": anywhere, "in_triples": in_triples,
        "exact": exact, "all_anywhere": all(anywhere), "all_in_triples": all(in_triples),
        "ends_in_answer": bool(triples) and contains_answer(triples[-1], question.answers),
        "complete": chain.complete, "length": len(triples),
    }
    if reference is not None:
        ref = reference.triples
        record["same_as_reference"] = [j < len(triples) and j < len(ref) and triples[j].id == ref[j].id
                                       for j in range(len(hops))]
    return record


def summarise_recovery(records: Sequence[Mapping]) -> dict:
    """The shares of `recovery` records: per hop over all their hops, per question over the questions;
    `at_hop_<j>` is the share at position j (1-based) over the questions that have a j-th hop, and
    `exact_if_complete` the share of exact chains among those the builder flagged complete."""
    def share(values: Sequence[bool]) -> float | None:
        return round(sum(values) / len(values), 4) if values else None

    summary: dict = {"questions": len(records), "hops": sum(r["hops"] for r in records)}
    for key in ("at_hop", "anywhere", "in_triples", "same_as_reference"):
        if any(key in r for r in records):  # a reference chain may be missing for some questions
            summary[key] = share([v for r in records if key in r for v in r[key]])
    for j in range(max((r["hops"] for r in records), default=0)):
        summary[f"at_hop_{j + 1}"] = share([r["at_hop"][j] for r in records if r["hops"] > j])
    for key in ("exact", "all_anywhere", "all_in_triples", "ends_in_answer", "complete"):
        summary[key] = share([r[key] for r in records])
    summary["exact_if_complete"] = share([r["exact"] for r in records if r["complete"]])
    summary["mean_length"] = round(sum(r["length"] for r in records) / max(len(records), 1), 3)
    return summary


def chain_report(config: ChainsConfig) -> dict:
    """Coverage and ground-truth agreement of the chains file, and of search-only chains (built here),
    with their `recovery` of the gold chains (`same_as_reference`: the chains file's chain as reference).

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
    file_by_id = {r.question_id: c for r, c in zip(records, in_file)}
    found = [recovery(q, c, kg.get_many(q.gold_passage_ids), file_by_id.get(q.id))
             for q, c in zip(benchmark.questions, search)]
    found = [r for r in found if r is not None]
    return {
        "file": coverage(in_file) | agreement([by_id[r.question_id] for r in records], in_file),
        "search": coverage(search) | agreement(benchmark.questions, search) | {"seconds": seconds}
        | ({"recovery": summarise_recovery(found)} if found else {}),
    }
