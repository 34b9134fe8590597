"""KiRAG's knowledge-driven iterative retrieval (paper sections 3.2-3.3), batched over questions.

Each step, for every question still running:
1. Knowledge decomposition: form the query (`aligner_query`, the format the Aligner was trained
   on), retrieve K0 passages, and collect their triples from the KG (extracted on demand).
2. Candidate knowledge identification: score the candidate set (`candidate_triples`: the distinct
   facts not yet in the chain, the same set the Aligner's negatives come from) with the Aligner
   (inner product of query and triple embeddings; triple embeddings come from `TripleIndex`,
   computed once per triple) and keep the top N distinct facts.
3. Reasoning chain construction: the Constructor LLM names the next triple, which is appended.
   It sees the N candidates (the paper), or only the Aligner's best `constructor_candidates` of
   them, an easier choice for a small LM. Without a Constructor (Aligner-only mode), or when its
   output names no candidate (a fallback, counted), the best candidate not yet in the chain is
   appended. A question stops after L steps, when no candidate is left, or, never at the first
   step, by the `stop` policy: `constructor` (the paper's) when the Constructor finds the chain
   complete (`Construction.complete`: it gives an answer without proposing a triple, or the new
   triple's tail is its answer); `answer_in_chain` only when the chain's last triple's tail is
   named by the Constructor's answer line, so an LM that claims an answer the chain does not hold
   is kept going while the budget of L steps allows.

Document ranking (`inference/kirag_ranking.py`): by default the paper's, a passage scores the highest
score of its triples among the candidates of all steps (ties to the higher retriever score), and
passages retrieved but never scored fill the list up to k in retrieval order, so k passages come
back whenever k were retrieved; `RankingConfig` can fuse in each passage's retriever score and the
Aligner's score of its text (against the question, or the steps' queries). Each prediction keeps every
retrieved passage's components.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np

from core.chains import aligner_query, candidate_triples
from core.config import ConfigError, require_positive
from core.types import Question, Triple
from inference.constructor import Construction, Constructor, names_answer
from inference.embedding_index import TripleIndex
from inference.kirag_ranking import PassageScores, RankingConfig, rank_passages
from inference.methods import Method, Prediction
from inference.rerank import PassageScorer
from inference.retrievers import Retriever
from kg.graph import TripleSource

StopPolicy = Literal["constructor", "answer_in_chain"]


@dataclass
class _Run:
    """The state of one question in the loop."""

    question: Question
    chain: list[Triple] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)  # passage id -> best candidate triple score
    retrieved: dict[str, float] = field(default_factory=dict)  # passage id -> best retriever score, in retrieval order
    step_texts: dict[str, float] = field(default_factory=dict)  # passage id -> best text score against a step's query
    trace: list[dict] = field(default_factory=list)
    retrieval_calls: int = 0
    llm_calls: int = 0
    fallbacks: int = 0  # Constructor outputs that named no candidate
    done: bool = False

    def query(self) -> str:
        return aligner_query(self.question.question, [t.text for t in self.chain])

    def passage_scores(self, texts: np.ndarray | None = None) -> list[PassageScores]:
        """The ranking components of the retrieved passages: those with a triple score in the order they
        were first scored, then the rest in retrieval order; `texts`: text scores against the question, in
        retrieval order."""
        text = dict(zip(self.retrieved, texts.tolist())) if texts is not None else {}
        order = [*self.scores, *(pid for pid in self.retrieved if pid not in self.scores)]
        return [PassageScores(pid, self.scores.get(pid), self.retrieved[pid], text.get(pid), self.step_texts.get(pid))
                for pid in order]


FALLBACK = "aligner (the Constructor named no candidate)"


@dataclass
class KiRAGSettings:
    """KiRAG's iterative retrieval (paper defaults: K0 = 10, N = 20, L = 5) and its document ranking."""

    k0: int = 10
    """K0: passages retrieved per step"""
    num_candidates: int = 20
    """N: triples kept per step"""
    max_steps: int = 5
    """L: the most steps per question"""
    constructor_candidates: int | None = None
    """the Constructor sees only the Aligner's best this many of the N candidates; null: all N (the paper)"""
    stop: StopPolicy = "constructor"
    """when a Constructor's chain ends before L steps (never at its first step): `constructor` (the paper)
    when the LM finds it complete, an answer without a new triple included; `answer_in_chain` only when the
    chain's last triple's tail is named by the LM's answer line"""
    ranking: RankingConfig = field(default_factory=RankingConfig)
    """the document ranking: the paper's best-triple rule, or fused with retriever and passage-text scores"""

    def __post_init__(self) -> None:
        require_positive(self, "k0", "num_candidates", "max_steps", "constructor_candidates")
        if self.constructor_candidates is not None and self.constructor_candidates > self.num_candidates:
            raise ConfigError("constructor_candidates", f"must be at most num_candidates ({self.num_candidates}), "
                                                        f"got {self.constructor_candidates}")
        if self.stop not in get_args(StopPolicy):
            raise ConfigError("stop", f"must be one of {', '.join(get_args(StopPolicy))}, got {self.stop!r}")


class KiRAG(Method):
    """KiRAG over `retriever`, a knowledge graph `kg` and an Aligner `TripleIndex` (whose encoder
    also embeds the queries) with `settings`, keeping the top `k`; `constructor=None` runs the
    Aligner-only mode. A ranking (`settings.ranking`) that scores passage text takes its text scores
    from `text_scorer` (module docstring)."""

    def __init__(
        self,
        retriever: Retriever,
        kg: TripleSource,
        triples: TripleIndex,
        constructor: Constructor | None = None,
        settings: KiRAGSettings | None = None,
        k: int = 10,
        text_scorer: PassageScorer | None = None,
    ) -> None:
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        self.settings = settings or KiRAGSettings()
        if self.settings.ranking.scores_any_text and text_scorer is None:
            raise ValueError("a ranking that scores passage text needs a text_scorer")
        self.retriever, self.kg, self.triples, self.constructor, self.k = retriever, kg, triples, constructor, k
        self.text_scorer = text_scorer if self.settings.ranking.scores_any_text else None

    def predict(self, questions: list[Question]) -> list[Prediction]:
        start = time.perf_counter()
        runs = [_Run(q) for q in questions]
        for step in range(self.settings.max_steps):
            active = [r for r in runs if not r.done]
            if not active:
                break
            candidates = self._identify_candidates(active, step)
            self._construct_chains(active, candidates)
        texts: list = [None] * len(runs)
        if self.settings.ranking.scores_text("question"):  # the question alone, the Aligner's first-hop query
            texts = self.text_scorer([aligner_query(r.question.question, []) for r in runs],
                                     [list(r.retrieved) for r in runs])
        seconds = (time.perf_counter() - start) / max(len(questions), 1)
        predictions = []
        for run, text in zip(runs, texts, strict=True):
            components = run.passage_scores(text)
            predictions.append(Prediction(
                run.question.id, rank_passages(components, self.settings.ranking, self.k),
                retrieval_calls=run.retrieval_calls, llm_calls=run.llm_calls, seconds=seconds,
                chain=[t.text for t in run.chain], trace=run.trace,
                retrieved=list(run.retrieved), fallbacks=run.fallbacks if self.constructor is not None else None,
                passage_scores=[list(p) for p in components]))
        return predictions

    def _identify_candidates(self, runs: list[_Run], step: int) -> list[list[tuple[Triple, float]]]:
        """Steps 1-2 for each run: retrieve, collect triples, keep the top N facts by Aligner score."""
        queries = [r.query() for r in runs]
        hits = self.retriever.search(queries, self.settings.k0)
        by_passage = self.kg.get_many(pid for row in hits for pid, _ in row)
        query_vectors = self.triples.encoder.encode(queries, "query", show_progress=False)
        self.triples.vectors([t for row in hits for pid, _ in row for t in by_passage[pid]])  # new ones in one batch
        texts = [None] * len(runs)
        if self.settings.ranking.scores_text("steps"):
            texts = self.text_scorer(queries, [[pid for pid, _ in row] for row in hits])
        result = []
        for run, query, vector, row, text in zip(runs, queries, query_vectors, hits, texts, strict=True):
            run.retrieval_calls += 1
            for i, (pid, score) in enumerate(row):
                run.retrieved[pid] = max(score, run.retrieved.get(pid, float("-inf")))
                if text is not None:
                    run.step_texts[pid] = max(float(text[i]), run.step_texts.get(pid, float("-inf")))
            instances = [t for pid, _ in row for t in by_passage[pid]]
            facts = candidate_triples(instances, run.chain)  # every instance of a fact scores the same
            top: list[tuple[Triple, float]] = []
            if facts:
                scores = self.triples.vectors(facts) @ vector
                best = np.argsort(-scores, kind="stable")[: self.settings.num_candidates]
                top = [(facts[i], float(scores[i])) for i in best]
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
            shown = self.settings.constructor_candidates or self.settings.num_candidates  # the Aligner's best first
            outputs = self.constructor([(runs[i].question.question, runs[i].chain,
                                         [t for t, _ in candidates[i][:shown]]) for i in asking])
            constructions = dict(zip(asking, outputs, strict=True))
        for i, (run, top) in enumerate(zip(runs, candidates, strict=True)):
            step = run.trace[-1]
            if not top:
                step["chosen"], run.done = None, True
                continue
            choice, source = top[0][0], "aligner"
            made, first = constructions.get(i), not run.chain  # a chain is never complete at its first step
            if made is not None:
                run.llm_calls += 1
                step["output"] = made.output
                if made.triple is not None:
                    choice, source = made.triple, "constructor"
                elif not first and self._complete(run.chain, made):  # nothing to append
                    choice, source = None, None
                else:
                    source = FALLBACK
                    run.fallbacks += 1
            if choice is not None:
                run.chain.append(choice)
            run.done = made is not None and not first and self._complete(run.chain, made)
            step["chosen"], step["chosen_by"] = (choice.text if choice else None), source

    def _complete(self, chain: list[Triple], made: Construction) -> bool:
        """Whether `chain` (with this step's triple, if any) ends the question, by the `stop` policy."""
        if self.settings.stop == "constructor":
            return made.complete
        return made.answer is not None and bool(chain) and names_answer(chain[-1], made.answer)
