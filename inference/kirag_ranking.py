"""KiRAG's document ranking: the paper's rule, or a passage-aware fusion (`RankingConfig`).

The paper (§3.3) ranks a passage by the highest Aligner score among its triples that were candidates
at some step. A passage none of whose triples was ever a candidate (the small extractor missed its
facts, or they lost to other triples) has no such score: it ranks after every scored passage, in
retrieval order. This is the ranking whenever only `triple_weight` is positive (the default).

With `retrieval_weight` or `text_weight` positive, every retrieved passage scores

    w_t · T + w_r · R + w_x · X

where T is its best candidate-triple score, R its best retriever score over the steps and X the
Aligner's score of its text ("title. text") against the question alone (the first-hop query, as
rag+rerank scores it: `inference.rerank.PassageScorer`), or with `text_query: steps` its best score
against the queries of the steps that retrieved it (the question and the chain so far, per step as T
and R are: a later hop's passage is scored by the query that found it). Each is min-max normalised over the
question's retrieved passages (`inference.rerank.weighted_min_max`), and a passage without a scored
triple takes the question's lowest T, so it still competes by R and X. Ties go to the higher T,
then the higher R, then the order of the passages' `PassageScores`.

The loop's chain does not depend on the ranking, so each prediction keeps every retrieved passage's
components (`Prediction.passage_scores`) and `rerank_predictions` ranks saved predictions again for
other weights, exactly as a run with those weights would (`evaluation/ranking_sweep.py` reads runs).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple, get_args

import numpy as np

from core.config import ConfigError, require_positive
from inference.methods import Prediction
from inference.rerank import weighted_min_max

TextQuery = Literal["question", "steps"]


@dataclass
class RankingConfig:
    """How KiRAG ranks the passages it retrieved (inference/kirag_ranking.py): w_t · best triple score +
    w_r · best retriever score + w_x · Aligner score of the text, each min-max normalised per question;
    only w_t positive (the default): the paper's rule, a passage scores its best candidate triple."""

    triple_weight: float = 1.0
    """w_t: the weight of a passage's best candidate-triple score (a passage without one takes the lowest)"""
    retrieval_weight: float = 0.0
    """w_r: the weight of its best retriever score over the steps"""
    text_weight: float = 0.0
    """w_x: the weight of the Aligner's score of its text ("title. text") against the question"""
    text_query: TextQuery = "question"
    """what the text is scored against: the question alone (`question`), or each query of the steps that retrieved
    the passage, its best score kept (`steps`)"""
    score_text: bool = False
    """score every retrieved passage's text against both queries even when `text_weight` is 0, so that the
    predictions hold them for an offline sweep of the weights and `text_query` (evaluation/ranking_sweep.py)"""
    passage_max_length: int = 256
    """the Aligner's token limit of passages for the text score"""

    def __post_init__(self) -> None:
        require_positive(self, "passage_max_length")
        for name in ("triple_weight", "retrieval_weight", "text_weight"):
            if not getattr(self, name) >= 0:  # NaN too
                raise ConfigError(name, f"must be at least 0, got {getattr(self, name)}")
        if self.text_query not in get_args(TextQuery):
            raise ConfigError("text_query", f"must be one of {', '.join(get_args(TextQuery))}, got {self.text_query!r}")
        if self.triple_weight + self.retrieval_weight + self.text_weight == 0:
            raise ConfigError("triple_weight", "and the other weights are all 0: at least one must be positive")

    @property
    def triples_only(self) -> bool:
        """The paper's rule: only the triple score counts."""
        return self.retrieval_weight == 0 and self.text_weight == 0

    def scores_text(self, query: TextQuery) -> bool:
        """Whether the loop must score the passages' text against `query`."""
        return self.score_text or (self.text_weight > 0 and self.text_query == query)

    @property
    def scores_any_text(self) -> bool:
        """Whether the loop must score the passages' text at all."""
        return any(self.scores_text(query) for query in get_args(TextQuery))


class PassageScores(NamedTuple):
    """A retrieved passage's ranking components (a list of 5 in `predictions.jsonl`)."""

    passage_id: str
    triple: float | None  # its best candidate-triple score; None: none of its triples was a candidate
    retrieval: float  # its best retriever score over the steps
    text: float | None  # the Aligner's score of its text against the question; None: not scored
    step_text: float | None = None  # its best against the queries of the steps that retrieved it; None: not scored


def rank_passages(passages: Sequence[PassageScores], ranking: RankingConfig, k: int) -> list[tuple[str, float]]:
    """The top `k` of a question's retrieved `passages` (those with a triple score in the order they were
    first scored, then the rest in retrieval order), each with its ranking score."""
    passages = [PassageScores(*p) for p in passages]  # lists, as read back from predictions.jsonl (4 long before
    # the step texts were kept)
    if ranking.triples_only:
        scored = sorted((p for p in passages if p.triple is not None), key=lambda p: (-p.triple, -p.retrieval))
        ranked = [(p.passage_id, p.triple) for p in scored[:k]]
        return ranked + [(p.passage_id, p.retrieval) for p in passages if p.triple is None][: k - len(ranked)]
    texts = [p.text if ranking.text_query == "question" else p.step_text for p in passages]
    if ranking.text_weight and (missing := next((p for p, x in zip(passages, texts) if x is None), None)):
        raise ValueError(f"passage {missing.passage_id} has no text score against the {ranking.text_query}, which "
                         f"text_weight {ranking.text_weight} needs (score_text)")
    lowest = min((p.triple for p in passages if p.triple is not None), default=0.0)
    components = [np.array([lowest if p.triple is None else p.triple for p in passages], dtype=np.float64),
                  np.array([p.retrieval for p in passages], dtype=np.float64),
                  np.array([x or 0.0 for x in texts], dtype=np.float64)]
    fused = weighted_min_max(components, [ranking.triple_weight, ranking.retrieval_weight, ranking.text_weight])
    triple = [-math.inf if p.triple is None else p.triple for p in passages]
    order = sorted(range(len(passages)), key=lambda i: (-fused[i], -triple[i], -components[1][i]))
    return [(passages[i].passage_id, float(fused[i])) for i in order[:k]]


def rerank_predictions(predictions: Iterable[Prediction], ranking: RankingConfig, k: int
                       ) -> dict[str, list[tuple[str, float]]]:
    """Saved KiRAG predictions ranked again by `ranking` from their `passage_scores`: question id -> top `k`."""
    ranked = {}
    for prediction in predictions:
        if prediction.passage_scores is None:
            raise ValueError(f"the prediction of question {prediction.question_id} has no passage_scores "
                             "(not a KiRAG prediction, or one saved before they were kept)")
        ranked[prediction.question_id] = rank_passages(prediction.passage_scores, ranking, k)
    return ranked
