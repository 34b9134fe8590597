"""Candidate negatives for the Aligner: the triples of the passages retrieved for each chain prefix.

For chain step i the query is `aligner_query(question, chain[:i])`, as at inference; the K0
passages retrieved for it give the triples T~^i of KiRAG (§3.2). The pool is KiRAG's candidate set
(`core.chains.candidate_triples`, the one the Aligner scores at inference): T~^i as distinct facts,
without any chain triple (by `Triple.id`, so the same fact extracted from another passage goes too).
The paper's authors did not publish how they mined negatives; the retriever should be the one KiRAG
searches with at inference (`ChainsConfig.retriever`), so that the Aligner learns to reject the
distractors it will meet.

Up to `max_negatives` are kept, by one of two rules:
- sampled (the default): a uniform sample drawn with a seed per (seed, question, step), listed in
  retrieval order. The paper contrasts the positive with the other triples of T~^i at large, and
  ranking by a lexical score would both bias the negatives toward what that score finds hard and pick
  up paraphrases of the positive (false negatives);
- ranked by a trained Aligner (`scorer`, a second round in the manner of ANCE): the pool's triples
  that this Aligner scores highest for the step's query, best first, so the next Aligner trains on
  the mistakes of the last. Paraphrases of a chain triple score high too, so every triple
  `equivalent` to one is left out first.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from core.chains import aligner_query, candidate_triples
from core.text import token_f1, tokens
from core.types import Triple
from inference.constructor import MIN_F1
from inference.embedding_index import TripleIndex
from inference.retrievers import Retriever
from kg.graph import TripleSource


def chain_queries(question: str, chain: Sequence[Triple]) -> list[str]:
    """The Aligner query for predicting each chain triple."""
    return [aligner_query(question, [t.text for t in chain[:i]]) for i in range(len(chain))]


def sample_negatives(candidates: list[Triple], limit: int, key: str) -> list[Triple]:
    """Up to `limit` candidates, drawn uniformly with a seed from `key`, kept in their order."""
    if len(candidates) <= limit:
        return candidates
    chosen = sorted(random.Random(key).sample(range(len(candidates)), limit))
    return [candidates[i] for i in chosen]


def equivalent(a: Triple, b: Triple) -> bool:
    """The same fact, perhaps in other words: the same normalised text, the same two entities (either way
    round, whatever the relation), or a near copy about the same head (token F1 at least the
    Constructor's `MIN_F1`)."""
    if a.id == b.id:
        return True
    (head_a, tail_a), (head_b, tail_b) = (tokens(a.head), tokens(a.tail)), (tokens(b.head), tokens(b.tail))
    if {head_a, tail_a} == {head_b, tail_b}:
        return True
    return head_a == head_b and token_f1(a.plain_text, b.plain_text) >= MIN_F1


def hardest_negatives(candidates: list[Triple], scores: np.ndarray, chain: Sequence[Triple], limit: int) -> list[Triple]:
    """Up to `limit` candidates by descending `scores` (the first of equal ones first), none `equivalent`
    to a chain triple."""
    kept: list[Triple] = []
    for i in np.argsort(-scores, kind="stable"):
        if len(kept) == limit:
            break
        if not any(equivalent(candidates[i], t) for t in chain):
            kept.append(candidates[i])
    return kept


def mine_negatives(
    items: Sequence[tuple[str, str, Sequence[Triple]]],
    retriever: Retriever,
    kg: TripleSource,
    k0: int = 10,
    max_negatives: int = 30,
    seed: int = 0,
    scorer: TripleIndex | None = None,
) -> list[list[list[Triple]]]:
    """For each (question id, question, chain): one list of negatives per chain triple, sampled, or the
    hardest by the Aligner of `scorer` (whose encoder embeds the queries).

    All queries go to the retriever in one call, and the triples of all retrieved passages are
    fetched together, so that `kg` extracts the missing ones in batches; `scorer` embeds the queries,
    and the triples it has not seen, in one batch each.
    """
    queries = [chain_queries(question, chain) for _, question, chain in items]
    flat = [q for per_item in queries for q in per_item]
    hits = retriever.search(flat, k0)
    triples = kg.get_many(pid for per_query in hits for pid, _ in per_query)
    query_vectors = None
    if scorer is not None and flat:
        query_vectors = scorer.encoder.encode(flat, "query", show_progress=False)
        scorer.vectors([t for per_query in hits for pid, _ in per_query for t in triples[pid]])
    result, position = [], 0
    for (question_id, _, chain), per_item in zip(items, queries):
        steps = []
        for step in range(len(per_item)):
            pool = candidate_triples((t for pid, _ in hits[position + step] for t in triples[pid]), chain)
            if query_vectors is None:
                steps.append(sample_negatives(pool, max_negatives, f"{seed}:{question_id}:{step}"))
            else:
                scores = scorer.vectors(pool) @ query_vectors[position + step] if pool else np.zeros(0)
                steps.append(hardest_negatives(pool, scores, chain, max_negatives))
        result.append(steps)
        position += len(per_item)
    return result
