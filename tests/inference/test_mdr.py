"""MDR-style two-hop dense retrieval: path scores, the merge of paths into a ranking, the budget, on a stub
retriever whose scores are exact in binary (so equal sums are equal)."""

import pytest

from core.types import Passage, Question
from inference.mdr import MDR, MDRSettings, hop2_query, merge_paths
from inference.retrievers import DenseRetriever

PASSAGES = {pid: Passage(pid, f"Title {pid}", f"Text of {pid}.") for pid in "ABCDEF"}
QUESTION = Question("q", "Who?")
HOP1 = [("A", 1.0), ("B", 0.75), ("C", 0.5)]
HOP2 = {"A": [("A", 2.0), ("C", 0.5), ("D", 0.25), ("E", 0.125)],  # A finds itself again: passed over
        "B": [("E", 1.0), ("A", 0.75), ("F", 0.125)]}


class StubRetriever:
    """Hop 1 for the question, hop 2 by the passage in the query; records every search."""

    def __init__(self):
        self.searches = []

    def search(self, queries, k):
        self.searches.append((list(queries), k))
        hop2 = {hop2_query(QUESTION.question, PASSAGES[pid]): hits for pid, hits in HOP2.items()}
        return [(HOP1 if query == QUESTION.question else hop2[query])[:k] for query in queries]


def test_paths_score_s1_plus_s2_and_merge_best_first():
    retriever = StubRetriever()
    (prediction,) = MDR(retriever, PASSAGES, MDRSettings(beam=2), k=10).predict([QUESTION])
    # paths: A-C 1.5, A-D 1.25, B-E 1.75, B-A 1.5; best first (A-C before B-A: the better hop-1 rank)
    assert prediction.trace[0]["paths"] == [["A", "C", 1.5], ["A", "D", 1.25], ["B", "E", 1.75], ["B", "A", 1.5]]
    assert prediction.passages == [("B", 1.75), ("E", 1.75), ("A", 1.5), ("C", 1.5), ("D", 1.25)]
    assert prediction.retrieved == ["B", "E", "A", "C", "D"]
    assert prediction.retrieval_calls == 3 and prediction.llm_calls == 0
    # the hop-1 search, then one batch of hop-2 searches: question + "title. text", one more than the beam
    assert retriever.searches == [(["Who?"], 2), (["Who? Title A. Text of A.", "Who? Title B. Text of B."], 3)]


@pytest.mark.parametrize("budget, expected", [(1, ["B"]), (3, ["B", "E", "A"]), (4, ["B", "E", "A", "C"]),
                                              (50, ["B", "E", "A", "C", "D"])])
def test_the_budget_caps_the_passages_retrieved(budget, expected):
    (prediction,) = MDR(StubRetriever(), PASSAGES, MDRSettings(beam=2, budget=budget), k=2).predict([QUESTION])
    assert prediction.retrieved == expected and [pid for pid, _ in prediction.passages] == expected[:2]


def test_merge_stops_at_the_budget_and_skips_repeats():
    paths = [("A", "B", 1.0), ("B", "A", 3.0), ("C", "A", 2.0), ("D", "E", 0.5)]
    assert merge_paths(paths, None).ids() == ["B", "A", "C", "D", "E"]
    assert merge_paths(paths, 3).ids() == ["B", "A", "C"]


def test_bad_settings_are_refused():
    for settings in ({"beam": 0}, {"budget": 0}):
        with pytest.raises(ValueError):
            MDRSettings(**settings)
    with pytest.raises(ValueError):
        MDR(StubRetriever(), PASSAGES, k=0)


def test_on_a_dense_retriever_each_question_gets_its_own_paths(tiny_encoder):
    corpus = list(PASSAGES.values())
    dense = DenseRetriever(tiny_encoder)
    dense.build(corpus)
    questions = [Question("q1", "Who founded the abbey?"), Question("q2", "Which river flows north?")]
    together = MDR(dense, PASSAGES, MDRSettings(beam=3, budget=3)).predict(questions)
    alone = [MDR(dense, PASSAGES, MDRSettings(beam=3, budget=3)).predict([q])[0] for q in questions]
    for batched, single in zip(together, alone):
        assert batched.retrieved == single.retrieved == [pid for pid, _ in batched.passages]
        assert [s for _, s in batched.passages] == pytest.approx([s for _, s in single.passages])
        assert len(batched.retrieved) == 3 and batched.retrieval_calls == 4
        assert all(p1 != p2 for p1, p2, _ in batched.trace[0]["paths"]) and len(batched.trace[0]["paths"]) == 9
