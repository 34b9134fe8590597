"""KiRAG's document ranking: the paper's best-triple rule by default, exactly as before; a passage-aware
fusion of triple, retriever and passage-text scores; saved predictions ranked again offline."""

import random

import numpy as np
import pytest

from core.config import ConfigError
from core.types import Passage, Question, Triple
from inference.embedding_index import EmbeddingIndex, TripleIndex
from inference.kirag import KiRAG, KiRAGSettings, _Run
from inference.kirag_ranking import PassageScores, RankingConfig, rank_passages, rerank_predictions
from inference.rerank import PassageScorer
from inference.retrievers import passage_text


def paper_rule(scores: dict[str, float], retrieved: dict[str, float], k: int) -> list[tuple[str, float]]:
    """`_Run.ranking` before the ranking became configurable, verbatim."""
    scored = sorted(scores, key=lambda pid: (-scores[pid], -retrieved[pid]))
    ranked = [(pid, scores[pid]) for pid in scored[:k]]
    ranked += [(pid, score) for pid, score in retrieved.items() if pid not in scores][: k - len(ranked)]
    return ranked


@pytest.mark.parametrize("weight", [1.0, 2.5])
def test_the_default_ranking_is_the_paper_rule_exactly(weight):
    rng = random.Random(0)
    for _ in range(300):  # ties in both scores, and passages first scored in another order than retrieved
        run = _Run(question=None)
        ids = [f"p{i}" for i in range(rng.randint(0, 9))]
        run.retrieved = {pid: rng.choice([0.5, 1.0, 2.0, rng.random()]) for pid in ids}
        run.scores = {pid: rng.choice([0.1, 0.3, rng.random()]) for pid in rng.sample(ids, rng.randint(0, len(ids)))}
        for k in range(1, len(ids) + 2):
            assert rank_passages(run.passage_scores(), RankingConfig(triple_weight=weight), k) == \
                paper_rule(run.scores, run.retrieved, k)


def test_fused_scores_by_hand():
    passages = [PassageScores("p1", 0.75, 1.0, 0.1), PassageScores("p2", 0.5, 2.0, 0.5),
                PassageScores("p3", None, 3.0, 0.9)]  # p3: none of its triples was ever a candidate
    # T (p3 takes the lowest, 0.5): 1, 0, 0; R: 0, 1/2, 1; X: 0, 1/2, 1
    both = rank_passages(passages, RankingConfig(1.0, 1.0, 0.0), 3)
    assert both == [("p1", 1.0), ("p3", 1.0), ("p2", 0.5)]  # p1 and p3 tie: the higher triple score first
    assert rank_passages(passages, RankingConfig(0.0, 0.0, 1.0), 3) == [("p3", 1.0), ("p2", 0.5), ("p1", 0.0)]
    mixed = rank_passages(passages, RankingConfig(0.5, 0.25, 0.25), 2)
    assert mixed == [("p1", pytest.approx(0.5)), ("p3", pytest.approx(0.5))]
    assert rank_passages(passages, RankingConfig(), 3) == [("p1", 0.75), ("p2", 0.5), ("p3", 3.0)]  # the paper's
    assert rank_passages([], RankingConfig(1.0, 1.0, 1.0), 3) == []


def test_a_text_weight_without_text_scores_is_refused():
    with pytest.raises(ValueError, match="passage p1 has no text score"):
        rank_passages([PassageScores("p1", 0.5, 1.0, None)], RankingConfig(text_weight=0.5), 3)
    assert rank_passages([PassageScores("p1", 0.5, 1.0, None)], RankingConfig(retrieval_weight=0.5), 3)[0][0] == "p1"


@pytest.mark.parametrize("kwargs, message", [
    ({"text_weight": -1.0}, "text_weight must be at least 0, got -1.0"),
    ({"retrieval_weight": float("nan")}, "retrieval_weight must be at least 0, got nan"),
    ({"triple_weight": 0.0}, "triple_weight and the other weights are all 0"),
    ({"passage_max_length": 0}, "passage_max_length must be at least 1, got 0"),
    ({"text_query": "chain"}, "text_query must be one of question, steps, got 'chain'"),
])
def test_bad_ranking_settings_are_refused(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        RankingConfig(**kwargs)


# --- the loop: p1 and p2 have triples, p3 none (the extractor missed its facts) -------------------------

A = Triple.make("Ostrel Brewing", "founded by", "Ana Corvel", "p1")
B = Triple.make("Ostrel Brewing", "founded in", "the year 1903", "p1")
C = Triple.make("Drusk", "located on", "Lake Ammer", "p2")
D = Triple.make("Lake Ammer", "area", "12 square kilometres", "p2")
KG = {"p1": [B, A], "p2": [C, D], "p3": []}
PASSAGES = {"p1": Passage("p1", "Ostrel Brewing", "Founded by Ana Corvel in 1903."),
            "p2": Passage("p2", "Drusk", "Drusk lies on Lake Ammer."),
            "p3": Passage("p3", "Ana Corvel", "Ana Corvel was born in Drusk.")}
# Aligner scores, exact in binary: a query embeds as [1], a triple or passage as [its score].
SCORES = {A.text: 0.75, B.text: 0.25, C.text: 0.5, D.text: 0.125} | {
    passage_text(PASSAGES[pid]): score for pid, score in (("p1", 0.125), ("p2", 0.5), ("p3", 0.875))}
QUESTION = Question("q", "Where was the founder of Ostrel Brewing born?")


class StubRetriever:
    def search(self, queries, k):
        return [[("p3", 3.0), ("p2", 2.0), ("p1", 1.0)][:k] for _ in queries]


class StubKG:
    def get_many(self, pids):
        return {pid: list(KG[pid]) for pid in pids}


class ScoreEncoder:
    def __init__(self):
        self.queries = []

    def encode(self, texts, kind="passage", batch_size=None, show_progress=True):
        if kind == "query":
            self.queries.extend(texts)
        return np.array([[1.0 if kind == "query" else SCORES[t]] for t in texts], dtype=np.float32)

    def fingerprint(self):
        return "score-stub"


def kirag(ranking=None, text=True, max_steps=2):
    scorer = PassageScorer(EmbeddingIndex(ScoreEncoder()), PASSAGES) if text else None
    settings = KiRAGSettings(k0=3, num_candidates=4, max_steps=max_steps, ranking=ranking or RankingConfig())
    return KiRAG(StubRetriever(), StubKG(), TripleIndex(ScoreEncoder()), settings=settings, k=3, text_scorer=scorer)


def test_the_loop_keeps_the_components_and_a_passage_without_triples_competes_by_its_text():
    (default,) = kirag(text=False).predict([QUESTION])
    assert default.passages == [("p1", 0.75), ("p2", 0.5), ("p3", 3.0)]  # p3 last: it has no triple
    # in the order first scored (p2 is retrieved before p1), then the unscored in retrieval order
    assert default.passage_scores == [["p2", 0.5, 2.0, None, None], ["p1", 0.75, 1.0, None, None],
                                      ["p3", None, 3.0, None, None]]
    method = kirag(RankingConfig(0.0, 0.0, 1.0))
    (text,) = method.predict([QUESTION])
    assert [pid for pid, _ in text.passages] == ["p3", "p2", "p1"]
    assert text.passage_scores == [["p2", 0.5, 2.0, 0.5, None], ["p1", 0.75, 1.0, 0.125, None],
                                   ["p3", None, 3.0, 0.875, None]]  # not against the steps: the ranking needs none
    assert method.text_scorer.index.encoder.queries == [QUESTION.question]  # the question alone, once
    assert text.chain == default.chain and text.trace == default.trace  # the ranking never changes the loop


class HopRetriever:
    """The question finds p2 and p1; a query with a chain finds p3 and p2."""

    def search(self, queries, k):
        return [[("p2", 2.0), ("p1", 1.0)] if q == QUESTION.question else [("p3", 3.0), ("p2", 1.5)] for q in queries]


class HopEncoder(ScoreEncoder):
    """A query embeds as [1], or [0.5] once it holds a chain: a text's score tells which query it was scored against."""

    def encode(self, texts, kind="passage", batch_size=None, show_progress=True):
        vectors = super().encode(texts, kind, batch_size, show_progress)
        return vectors * np.array([[1.0 if kind != "query" or t == QUESTION.question else 0.5] for t in texts],
                                  dtype=np.float32)


def hop_kirag(ranking: RankingConfig) -> KiRAG:
    settings = KiRAGSettings(k0=2, num_candidates=4, max_steps=2, ranking=ranking)
    return KiRAG(HopRetriever(), StubKG(), TripleIndex(HopEncoder()), settings=settings, k=3,
                 text_scorer=PassageScorer(EmbeddingIndex(HopEncoder()), PASSAGES))


def test_text_against_the_steps_keeps_each_passage_s_best_score_over_the_queries_that_retrieved_it():
    method = hop_kirag(RankingConfig(0.0, 0.0, 1.0, text_query="steps"))
    (steps,) = method.predict([QUESTION])
    second = method.text_scorer.index.encoder.queries[1]
    assert method.text_scorer.index.encoder.queries == [QUESTION.question, second] and second != QUESTION.question
    # p2 at both steps (0.5, then 0.5 · 0.5), p1 at the first only (0.125), p3 at the second only (0.5 · 0.875)
    assert {pid: step for pid, _, _, _, step in steps.passage_scores} == {"p1": 0.125, "p2": 0.5, "p3": 0.4375}
    assert [pid for pid, _ in steps.passages] == ["p2", "p3", "p1"]
    (question,) = hop_kirag(RankingConfig(0.0, 0.0, 1.0)).predict([QUESTION])  # against the question alone
    assert {pid: text for pid, _, _, text, _ in question.passage_scores} == {"p1": 0.125, "p2": 0.5, "p3": 0.875}
    assert [pid for pid, _ in question.passages] == ["p3", "p2", "p1"]
    assert question.chain == steps.chain and question.trace == steps.trace
    (saved,) = hop_kirag(RankingConfig(score_text=True)).predict([QUESTION])  # both kept, for an offline sweep
    for ranking in (RankingConfig(0.0, 0.0, 1.0, text_query="steps"), RankingConfig(1.0, 1.0, 1.0, text_query="steps"),
                    RankingConfig(0.0, 0.0, 1.0)):
        assert rerank_predictions([saved], ranking, 3) == {"q": hop_kirag(ranking).predict([QUESTION])[0].passages}
    with pytest.raises(ValueError, match="passage p1 has no text score against the steps"):
        rank_passages([["p1", 0.5, 1.0, 0.25]], RankingConfig(text_weight=1.0, text_query="steps"), 3)  # 4 long


@pytest.mark.parametrize("weights", [(1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (0.0, 0.0, 1.0), (0.5, 0.25, 0.25)])
def test_saved_predictions_ranked_again_equal_a_run_with_those_weights(weights):
    (saved,) = kirag(RankingConfig(score_text=True)).predict([QUESTION])
    (direct,) = kirag(RankingConfig(*weights)).predict([QUESTION])
    assert rerank_predictions([saved], RankingConfig(*weights), 3) == {"q": direct.passages}


def test_text_scores_are_needed_by_a_text_weight_and_only_then_computed():
    with pytest.raises(ValueError, match="needs a text_scorer"):
        kirag(RankingConfig(text_weight=1.0), text=False)
    method = kirag(RankingConfig(retrieval_weight=1.0))
    assert method.text_scorer is None and method.predict([QUESTION])[0].passage_scores[0][3:] == [None, None]
    with pytest.raises(ValueError, match="no passage_scores"):
        rerank_predictions([type(method.predict([QUESTION])[0])("q", [])], RankingConfig(), 3)
