"""Candidate negatives for the Aligner: the triples of the passages retrieved for each chain prefix.

For chain step i the query is `aligner_query(question, chain[:i])`, as at inference; the K0
passages retrieved for it give the triples T~^i of KiRAG (§3.2). The negatives are KiRAG's candidate
set (`core.chains.candidate_triples`, the one the Aligner scores at inference): T~^i as distinct facts,
without any chain triple (by `Triple.id`, so the same fact extracted from another passage goes too).

Up to `max_negatives` are kept, a uniform sample drawn with a seed per (seed, question, step) and
listed in retrieval order. Sampled rather than ranked: the paper contrasts the positive with the
other triples of T~^i at large, and ranking by a lexical score would both bias the negatives
toward what that score finds hard and pick up paraphrases of the positive (false negatives).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from core.chains import aligner_query, candidate_triples
from core.types import Triple
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


def mine_negatives(
    items: Sequence[tuple[str, str, Sequence[Triple]]],
    retriever: Retriever,
    kg: TripleSource,
    k0: int = 10,
    max_negatives: int = 30,
    seed: int = 0,
) -> list[list[list[Triple]]]:
    """For each (question id, question, chain): one list of negatives per chain triple.

    All queries go to the retriever in one call, and the triples of all retrieved passages are
    fetched together, so that `kg` extracts the missing ones in batches.
    """
    queries = [chain_queries(question, chain) for _, question, chain in items]
    hits = retriever.search([q for per_item in queries for q in per_item], k0)
    triples = kg.get_many(pid for per_query in hits for pid, _ in per_query)
    result, position = [], 0
    for (question_id, _, chain), per_item in zip(items, queries):
        steps = []
        for step in range(len(per_item)):
            pool = candidate_triples((t for pid, _ in hits[position + step] for t in triples[pid]), chain)
            steps.append(sample_negatives(pool, max_negatives, f"{seed}:{question_id}:{step}"))
        result.append(steps)
        position += len(per_item)
    return result
