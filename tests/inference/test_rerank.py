"""rag+rerank: the fused ranking of one retrieval by retriever and Aligner scores, and its passage-embedding cache."""

import numpy as np
import pytest

from core.types import Passage, Question
from inference.embedding_index import EmbeddingIndex
from inference.rerank import PassageRerank, PassageScorer, RerankSettings
from inference.retrievers import BM25Retriever, passage_text

PASSAGES = {pid: Passage(pid, f"Title {pid}", f"Text of {pid}.") for pid in "abcd"}
RETRIEVED = [("a", 3.0), ("b", 2.0), ("c", 1.0), ("d", 0.0)]
# Aligner scores, exact in binary: a passage embeds as [its score], the query as [1]
ALIGNER = {passage_text(PASSAGES[pid]): score for pid, score in zip("abcd", [0.125, 0.5, 0.375, 0.875])}
QUESTIONS = [Question("q", "Who?")]


class StubRetriever:
    def __init__(self, hits=RETRIEVED):
        self.hits, self.searches = hits, []

    def search(self, queries, k):
        self.searches.append((list(queries), k))
        return [self.hits[:k] for _ in queries]


class ScoreEncoder:
    def encode(self, texts, kind="passage", batch_size=None, show_progress=True):
        return np.array([[1.0 if kind == "query" else ALIGNER[t]] for t in texts], dtype=np.float32)

    def fingerprint(self):
        return "score-stub"


def rerank(weight, depth=50, k=10):
    return PassageRerank(StubRetriever(), PassageScorer(EmbeddingIndex(ScoreEncoder()), PASSAGES),
                         RerankSettings(depth, weight), k=k)


def ranked(prediction):
    return [pid for pid, _ in prediction.passages]


def test_weight_0_is_the_retrievers_order_and_weight_1_the_aligners():
    assert ranked(rerank(0.0).predict(QUESTIONS)[0]) == ["a", "b", "c", "d"]
    assert ranked(rerank(1.0).predict(QUESTIONS)[0]) == ["d", "b", "c", "a"]


def test_fused_scores_by_hand():
    (prediction,) = rerank(0.5).predict(QUESTIONS)
    # min-max normalised: retriever a 1, b 2/3, c 1/3, d 0; Aligner a 0, b 1/2, c 1/3, d 1
    # fused: b 7/12, then a and d tie at 1/2 (the retriever's order: a first), c 1/3
    assert ranked(prediction) == ["b", "a", "d", "c"]
    assert [s for _, s in prediction.passages] == pytest.approx([7 / 12, 0.5, 0.5, 1 / 3])
    assert prediction.trace[0]["scores"] == [["a", 3.0, 0.125], ["b", 2.0, 0.5], ["c", 1.0, 0.375], ["d", 0.0, 0.875]]
    assert (prediction.retrieval_calls, prediction.llm_calls) == (1, 0)


def test_depth_passages_are_retrieved_and_k_returned():
    method = rerank(1.0, k=2, depth=3)
    (prediction,) = method.predict(QUESTIONS)
    assert method.retriever.searches == [(["Who?"], 3)]
    assert prediction.retrieved == ["a", "b", "c"] and ranked(prediction) == ["b", "c"]


def test_a_question_with_nothing_retrieved_gets_nothing():
    method = PassageRerank(StubRetriever([]), PassageScorer(EmbeddingIndex(ScoreEncoder()), PASSAGES),
                           RerankSettings(depth=50))
    (prediction,) = method.predict(QUESTIONS)
    assert prediction.passages == [] and prediction.retrieved == []


@pytest.mark.parametrize("settings", [{"weight": -0.1}, {"weight": 1.5}, {"depth": 0}])
def test_bad_settings_are_refused(settings):
    with pytest.raises(ValueError):
        RerankSettings(**settings)


@pytest.mark.parametrize("settings, k", [(RerankSettings(), 10), (RerankSettings(depth=50), 0)])
def test_an_unset_depth_or_a_bad_k_is_refused(settings, k):
    with pytest.raises(ValueError):
        PassageRerank(StubRetriever(), PassageScorer(EmbeddingIndex(ScoreEncoder()), PASSAGES), settings, k=k)


def test_passage_embeddings_are_computed_once_and_kept_on_disk(tiny_encoder, tmp_path, monkeypatch):
    corpus = list(PASSAGES.values())
    bm25 = BM25Retriever()
    bm25.build(corpus)
    questions = [Question("q1", "Title a text"), Question("q2", "Text of b")]
    embedded, encode = [], tiny_encoder.encode
    monkeypatch.setattr(tiny_encoder, "encode",
                        lambda texts, kind="passage", *a, **kw: (embedded.extend(texts) if kind == "passage" else None)
                        or encode(texts, kind, *a, **kw))
    def method():
        return PassageRerank(bm25, PassageScorer(EmbeddingIndex(tiny_encoder, tmp_path, "passages"), PASSAGES),
                             RerankSettings(depth=4))

    first = method().predict(questions)
    assert sorted(embedded) == sorted(passage_text(p) for p in corpus)  # each passage once, for both questions
    embedded.clear()
    again = method().predict(questions)
    assert embedded == [] and [p.passages for p in again] == [p.passages for p in first]
    assert [f.name.split("-")[0] for f in tmp_path.iterdir()] == ["passages"]
