"""KiRAG's knowledge-driven iterative retrieval (paper sections 3.2-3.3), batched over questions.

Each step, for every question still running:
1. Knowledge decomposition: form the query (`aligner_query`, the format the Aligner was trained
   on), retrieve K0 passages, and collect their triples from the KG (extracted on demand).
2. Candidate knowledge identification: score the candidate set (`candidate_triples`: the distinct
   facts not yet in the chain, the same set the Aligner's negatives come from) with the Aligner
   (inner product of query and triple embeddings; triple embeddings come from `TripleIndex`,
   computed once per triple) and keep the top N distinct facts.
3. Reasoning chain construction: the Constructor LLM names the next triple, which is appended;
   the question stops when the Constructor finds the chain complete (`Construction.complete`),
   never at the first step. Without a Constructor (Aligner-only mode), or when its output names no
   candidate (a fallback, counted), the best candidate not yet in the chain is appended. A
   question stops after L steps, or when no candidate is left.

Document ranking: a passage scores the highest score of its triples among the candidates of all
steps; ties go to the higher retriever score. Passages retrieved but never scored fill the list up
to k, in retrieval order, so k passages come back whenever k were retrieved.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from core.chains import aligner_query, candidate_triples
from core.types import Question, Triple
from inference.constructor import Constructor
from inference.embedding_index import TripleIndex
from inference.methods import Method, Prediction
from inference.retrievers import Retriever
from kg.graph import TripleSource


@dataclass
class _Run:
    """The state of one question in the loop."""

    question: Question
    chain: list[Triple] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)  # passage id -> best candidate triple score
    retrieved: dict[str, float] = field(default_factory=dict)  # passage id -> best retriever score, in retrieval order
    trace: list[dict] = field(default_factory=list)
    retrieval_calls: int = 0
    llm_calls: int = 0
    fallbacks: int = 0  # Constructor outputs that named no candidate
    done: bool = False

    def query(self) -> str:
        return aligner_query(self.question.question, [t.text for t in self.chain])

    def ranking(self, k: int) -> list[tuple[str, float]]:
        scored = sorted(self.scores, key=lambda pid: (-self.scores[pid], -self.retrieved[pid]))
        ranked = [(pid, self.scores[pid]) for pid in scored[:k]]
        ranked += [(pid, score) for pid, score in self.retrieved.items() if pid not in self.scores][: k - len(ranked)]
        return ranked


FALLBACK = "aligner (the Constructor named no candidate)"


class KiRAG(Method):
    """KiRAG over `retriever`, a knowledge graph `kg` and an Aligner `TripleIndex` (whose encoder
    also embeds the queries); `constructor=None` runs the Aligner-only mode."""

    def __init__(
        self,
        retriever: Retriever,
        kg: TripleSource,
        triples: TripleIndex,
        constructor: Constructor | None = None,
        k: int = 10,
        k0: int = 10,
        num_candidates: int = 20,
        max_steps: int = 5,
    ) -> None:
        if min(k, k0, num_candidates, max_steps) < 1:
            raise ValueError("k, k0, num_candidates and max_steps must all be positive")
        self.retriever, self.kg, self.triples, self.constructor = retriever, kg, triples, constructor
        self.k, self.k0, self.num_candidates, self.max_steps = k, k0, num_candidates, max_steps

    def predict(self, questions: list[Question]) -> list[Prediction]:
        start = time.perf_counter()
        runs = [_Run(q) for q in questions]
        for step in range(self.max_steps):
            active = [r for r in runs if not r.done]
            if not active:
                break
            candidates = self._identify_candidates(active, step)
            self._construct_chains(active, candidates)
        seconds = (time.perf_counter() - start) / max(len(questions), 1)
        return [
            Prediction(r.question.id, r.ranking(self.k), retrieval_calls=r.retrieval_calls, llm_calls=r.llm_calls,
                       seconds=seconds, chain=[t.text for t in r.chain], trace=r.trace,
                       retrieved=list(r.retrieved),
                       fallbacks=r.fallbacks if self.constructor is not None else None)
            for r in runs
        ]

    def _identify_candidates(self, runs: list[_Run], step: int) -> list[list[tuple[Triple, float]]]:
        """Steps 1-2 for each run: retrieve, collect triples, keep the top N facts by Aligner score."""
        queries = [r.query() for r in runs]
        hits = self.retriever.search(queries, self.k0)
        by_passage = self.kg.get_many(pid for row in hits for pid, _ in row)
        query_vectors = self.triples.encoder.encode(queries, "query", show_progress=False)
        self.triples.vectors([t for row in hits for pid, _ in row for t in by_passage[pid]])  # new ones in one batch
        result = []
        for run, query, vector, row in zip(runs, queries, query_vectors, hits, strict=True):
            run.retrieval_calls += 1
            for pid, score in row:
                run.retrieved[pid] = max(score, run.retrieved.get(pid, float("-inf")))
            instances = [t for pid, _ in row for t in by_passage[pid]]
            facts = candidate_triples(instances, run.chain)  # every instance of a fact scores the same
            top: list[tuple[Triple, float]] = []
            if facts:
                scores = self.triples.vectors(facts) @ vector
                top = [(facts[i], float(scores[i])) for i in np.argsort(-scores, kind="stable")[: self.num_candidates]]
                kept = {t.id: score for t, score in top}
                for t in instances:  # every passage stating a kept fact gets its score
                    if t.id in kept:
                        run.scores[t.passage_id] = max(kept[t.id], run.scores.get(t.passage_id, float("-inf")))
            run.trace.append({
                "step": step,
                "query": query,
                "retrieved": [pid for pid, _ in row],
                "candidates": [[t.text, t.passage_id, round(s, 6)] for t, s in top],
            })
            result.append(top)
        return result

    def _construct_chains(self, runs: list[_Run], candidates: list[list[tuple[Triple, float]]]) -> None:
        """Step 3: append one triple per run (Constructor or Aligner), and decide which runs stop."""
        constructions = {}
        if self.constructor is not None:
            asking = [i for i, top in enumerate(candidates) if top]
            outputs = self.constructor([(runs[i].question.question, runs[i].chain, [t for t, _ in candidates[i]])
                                        for i in asking])
            constructions = dict(zip(asking, outputs, strict=True))
        for i, (run, top) in enumerate(zip(runs, candidates, strict=True)):
            step = run.trace[-1]
            if not top:
                step["chosen"], run.done = None, True
                continue
            choice, source = top[0][0], "aligner"
            if i in constructions:
                run.llm_calls += 1
                made = constructions[i]
                step["output"] = made.output
                complete = made.complete and bool(run.chain)  # never at the first step
                if made.triple is not None:
                    choice, source = made.triple, "constructor"
                elif complete:  # nothing to append
                    choice, source = None, None
                else:
                    source = FALLBACK
                    run.fallbacks += 1
                run.done = complete
            if choice is not None:
                run.chain.append(choice)
            step["chosen"], step["chosen_by"] = (choice.text if choice else None), source
