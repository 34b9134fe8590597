"""KiRAG's loop on the demo data and its packaged KG, with a tiny random Aligner and a scripted Constructor."""

import re
import shutil

import numpy as np
import pytest

from core.chains import ChainRecord
from core.types import Question, Triple
from datamodules.aligner_datamodule import ChainExamples, ExampleKey
from datamodules.loaders import DEMO_DIR, DataConfig
from inference.constructor import Construction, Constructor
from inference.embedding_index import TripleIndex
from inference.kirag import FALLBACK, KiRAG, KiRAGSettings, _Run
from inference.kirag_ranking import RankingConfig, rank_passages
from inference.retrievers import BM25Retriever
from kg.graph import KnowledgeGraph
from kg.store import KGStore


@pytest.fixture(scope="module")
def demo():
    return DataConfig().load()


@pytest.fixture(scope="module")
def retriever(demo):
    r = BM25Retriever()
    r.build(demo.passages)
    return r


@pytest.fixture
def kg(demo, tmp_path):
    shutil.copytree(DEMO_DIR / "kg", tmp_path / "kg")
    return KnowledgeGraph(KGStore(tmp_path / "kg"), None, demo.passage_by_id())


class CountingEncoder:
    """Wraps an Encoder and records every text it embeds, by kind, and the batch sizes asked for."""

    def __init__(self, encoder):
        self.encoder = encoder
        self.calls = {"query": [], "passage": []}
        self.batch_sizes = set()

    def encode(self, texts, kind="passage", batch_size=None, show_progress=True):
        self.calls[kind].extend(texts)
        self.batch_sizes.add(batch_size)
        return self.encoder.encode(texts, kind, batch_size, show_progress=False)

    def fingerprint(self):
        return self.encoder.fingerprint()


class RecordingRetriever:
    def __init__(self, retriever):
        self.retriever, self.queries = retriever, []

    def search(self, queries, k):
        self.queries.extend(queries)
        return self.retriever.search(queries, k)


class ScriptedConstructor:
    """Picks the LAST candidate (unlike the Aligner) and gives its tail as the answer at step `answer_at` (0-based)."""

    def __init__(self, answer_at=None):
        self.answer_at, self.seen = answer_at, []

    def __call__(self, items):
        self.seen.append(items)
        step = len(self.seen) - 1
        return [Construction(cands[-1], cands[-1].tail if step == self.answer_at else None, "")
                for _, _, cands in items]


def test_k_distinct_passages_deterministically(demo, retriever, kg, make_tiny_encoder):
    questions = demo.questions[:6]
    settings = KiRAGSettings(max_steps=3)
    runs = [KiRAG(retriever, kg, TripleIndex(make_tiny_encoder()), settings=settings).predict(questions)
            for _ in range(2)]
    for prediction in runs[0]:
        ids = [pid for pid, _ in prediction.passages]
        assert len(ids) == 10
        assert len(prediction.chain) == 3 and prediction.retrieval_calls == 3 and prediction.llm_calls == 0
    assert [p.passages for p in runs[0]] == [p.passages for p in runs[1]]
    assert [p.chain for p in runs[0]] == [p.chain for p in runs[1]]


def test_candidate_limit_n(demo, retriever, kg, tiny_encoder):
    constructor = ScriptedConstructor()
    predictions = KiRAG(retriever, kg, TripleIndex(tiny_encoder), constructor,
                        KiRAGSettings(num_candidates=3, max_steps=2)).predict(demo.questions[:4])
    for prediction in predictions:
        assert all(len(step["candidates"]) == 3 for step in prediction.trace)
        for step in prediction.trace:  # the best 3 distinct facts, best first
            scores = [score for _, _, score in step["candidates"]]
            assert scores == sorted(scores, reverse=True)
            assert len({text.lower() for text, _, _ in step["candidates"]}) == 3
    assert all(len(cands) == 3 for call in constructor.seen for _, _, cands in call)


def test_stop_rule(demo, retriever, kg, tiny_encoder):
    questions = demo.questions[:3]
    triples = TripleIndex(tiny_encoder)
    answered = KiRAG(retriever, kg, triples, ScriptedConstructor(answer_at=1), KiRAGSettings(max_steps=5)).predict(
        questions)
    for p in answered:  # the answering step still appends its first triple, then the loop stops
        assert p.retrieval_calls == p.llm_calls == 2 and len(p.chain) == 2
        assert [s["chosen_by"] for s in p.trace] == ["constructor", "constructor"]
    never = KiRAG(retriever, kg, triples, ScriptedConstructor(), KiRAGSettings(max_steps=4)).predict(questions)
    assert all(p.retrieval_calls == p.llm_calls == 4 and len(p.chain) == 4 for p in never)
    first = KiRAG(retriever, kg, triples, ScriptedConstructor(answer_at=0), KiRAGSettings(max_steps=4)).predict(
        questions)
    assert all(p.retrieval_calls == 4 and len(p.chain) == 4 for p in first)  # never complete at the first step
    assert all(p.fallbacks == 0 for p in first + never)


def test_constructor_choice_is_appended_and_aligner_only_takes_the_best(demo, retriever, kg, tiny_encoder):
    question = demo.questions[:1]
    triples = TripleIndex(tiny_encoder)
    aligner = KiRAG(retriever, kg, triples, settings=KiRAGSettings(max_steps=1)).predict(question)[0]
    constructed = KiRAG(retriever, kg, triples, ScriptedConstructor(), KiRAGSettings(max_steps=1)).predict(question)[0]
    candidates = aligner.trace[0]["candidates"]
    assert aligner.chain == [candidates[0][0]] and aligner.trace[0]["chosen_by"] == "aligner"
    assert constructed.chain == [candidates[-1][0]]


def test_triple_embeddings_are_computed_once_and_persisted(demo, retriever, kg, tiny_encoder, tmp_path):
    counting = CountingEncoder(tiny_encoder)
    method = KiRAG(retriever, kg, TripleIndex(counting, tmp_path / "emb"), settings=KiRAGSettings(max_steps=3))
    questions = demo.questions[:5]
    first = method.predict(questions)
    embedded = counting.calls["passage"]
    assert embedded and len(embedded) == len(set(embedded))  # each fact once
    assert len(counting.calls["query"]) == 3 * len(questions)  # one query encoding per question and step
    assert counting.batch_sizes == {None}  # the encoder's own batch size applies

    second = method.predict(questions)
    assert len(counting.calls["passage"]) == len(embedded)  # nothing recomputed
    reloaded = CountingEncoder(tiny_encoder)
    again = KiRAG(retriever, kg, TripleIndex(reloaded, tmp_path / "emb"), settings=KiRAGSettings(max_steps=3)).predict(
        questions)
    assert reloaded.calls["passage"] == []  # read back from disk
    assert [p.passages for p in first] == [p.passages for p in second] == [p.passages for p in again]


def test_triple_index_reuses_whole_chunks_after_a_crash(tiny_encoder, tmp_path, monkeypatch):
    triples = [Triple.make(f"entity {i}", "related to", f"thing {i}", "p") for i in range(5)]
    index = TripleIndex(tiny_encoder, tmp_path)
    expected = index.vectors(triples[:3])

    def killed(src, dst):  # the second chunk is written to its temporary name, then the run dies
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr("inference.embedding_index.os.replace", killed)
        with pytest.raises(KeyboardInterrupt):
            index.vectors(triples)
    counting = CountingEncoder(tiny_encoder)
    reloaded = TripleIndex(counting, tmp_path)
    np.testing.assert_allclose(reloaded.vectors(triples[:3]), expected, rtol=1e-6)
    reloaded.vectors(triples)
    assert counting.calls["passage"] == [t.text for t in triples[3:]]


def test_queries_use_the_training_format(demo, retriever, kg, tiny_encoder):
    recording = RecordingRetriever(retriever)
    question = demo.questions[0]
    settings = KiRAGSettings(max_steps=3)
    prediction = KiRAG(recording, kg, TripleIndex(tiny_encoder), settings=settings).predict([question])[0]
    chain = [Triple.make(*t[1:-1].split("; "), "p") for t in prediction.chain]
    record = ChainRecord(question.id, question.question, "", True, True, tuple(chain), ((),) * len(chain))
    examples = ChainExamples([record], num_negatives=0)
    training = [examples.example(ExampleKey(0, 0, hop, None))["query"] for hop in range(3)]
    assert recording.queries == training


def test_ranking_breaks_ties_by_retriever_score_and_fills_from_retrieval():
    run = _Run(question=None)
    run.retrieved = {"a": 3.0, "b": 9.0, "c": 5.0, "d": 1.0, "e": 2.0}
    run.scores = {"c": 0.5, "a": 0.8, "b": 0.5}
    assert rank_passages(run.passage_scores(), RankingConfig(), 5) == [("a", 0.8), ("b", 0.5), ("c", 0.5), ("d", 1.0),
                                                                       ("e", 2.0)]
    assert [pid for pid, _ in rank_passages(run.passage_scores(), RankingConfig(), 2)] == ["a", "b"]


def test_bad_settings_are_refused(retriever, kg, tiny_encoder):
    with pytest.raises(ValueError, match="num_candidates must be at least 1"):
        KiRAGSettings(num_candidates=0)
    with pytest.raises(ValueError, match="k must be at least 1"):
        KiRAG(retriever, kg, TripleIndex(tiny_encoder), k=0)


# --- chain triples are distinct, and a passage scores its best triple (stub retriever, KG, encoder) --------

A = Triple.make("Ostrel Brewing", "founded by", "Ana Corvel", "p1")
B = Triple.make("Ostrel Brewing", "founded in", "the year 1903", "p1")  # token F1 with A: 2·3/(6+6) = 0.5
C = Triple.make("Drusk", "located on", "Lake Ammer", "p2")
D = Triple.make("Lake Ammer", "area", "12 square kilometres", "p2")
# Aligner scores, exact in float32: the query embeds as [1], a triple as [its score].
STUB_SCORES = {A.text: 0.75, B.text: 0.25, C.text: 0.5, D.text: 0.125}
# Each passage lists a low and a high triple, in both orders, so neither the first nor the last triple decides.
STUB_KG = {"p1": [B, A], "p2": [C, D]}


class StubRetriever:
    """Returns p1 and p2 for every query (p2 with the higher retriever score)."""

    def __init__(self):
        self.queries = []

    def search(self, queries, k):
        self.queries.extend(queries)
        return [[("p2", 2.0), ("p1", 1.0)][:k] for _ in queries]


class StubKG:
    def get_many(self, pids):
        return {pid: list(STUB_KG[pid]) for pid in pids}


class ScoreEncoder:
    """One dimension: a query is [1], a triple [its score in STUB_SCORES], so the Aligner score is that score."""

    def encode(self, texts, kind="passage", batch_size=None, show_progress=True):
        values = [1.0 if kind == "query" else STUB_SCORES[t] for t in texts]
        return np.array(values, dtype=np.float32)[:, None]

    def fingerprint(self):
        return "score-stub"


def stub_kirag(constructor=None, max_steps=1):
    return KiRAG(StubRetriever(), StubKG(), TripleIndex(ScoreEncoder()), constructor,
                 KiRAGSettings(k0=2, num_candidates=4, max_steps=max_steps), k=10)


class ScriptedChatLM:
    """A chat LM whose i-th call answers `replies[i]` to every conversation."""

    def __init__(self, replies):
        self.replies, self.calls = replies, 0

    def chat(self, conversations, **kwargs):
        reply = self.replies[min(self.calls, len(self.replies) - 1)]
        self.calls += 1
        return [type("G", (), {"text": reply})() for _ in conversations]


def test_stub_passage_scores_its_best_triple_not_its_worst_or_last():
    one = stub_kirag(max_steps=1).predict([Question("q", "Where was the founder of Ostrel Brewing born?")])[0]
    # p1 holds B (0.25) then A (0.75); p2 holds C (0.5) then D (0.125): each passage scores its best.
    assert one.passages == [("p1", 0.75), ("p2", 0.5)]
    assert one.trace[0]["candidates"] == [[A.text, "p1", 0.75], [C.text, "p2", 0.5], [B.text, "p1", 0.25],
                                          [D.text, "p2", 0.125]]
    # Later steps no longer offer A (it is in the chain): p1's best stays the 0.75 of step 0.
    three = stub_kirag(max_steps=3).predict([Question("q", "Where was the founder of Ostrel Brewing born?")])[0]
    assert three.passages == [("p1", 0.75), ("p2", 0.5)]


def test_stub_aligner_chain_never_repeats_a_triple():
    prediction = stub_kirag(max_steps=5).predict([Question("q", "Where was the founder of Ostrel Brewing born?")])[0]
    # A stays the best-scoring fact at every step; each step must take the best fact NOT yet in the chain.
    assert prediction.chain == [A.text, C.text, B.text, D.text]
    assert prediction.retrieval_calls == 5 and prediction.trace[-1]["chosen"] is None  # nothing left at step 5
    assert [len(step["candidates"]) for step in prediction.trace] == [4, 3, 2, 1, 0]


@pytest.mark.parametrize("restated", [A.text, "<Ostrel Brewing; was founded by; Ana Corvel>"])
def test_stub_constructor_restating_a_chain_triple_does_not_repeat_it(restated):
    # Step 0: the LM writes A. Step 1: it restates A, then writes C, whose tail it gives as the answer:
    # C is the new triple: A verbatim is passed over, and reworded it is no near copy of B, the candidate of its
    # head (token F1 6/13 < 0.8). The chain is then complete.
    lm = ScriptedChatLM([A.text, f"{restated}\n{C.text}\nSo the answer is: Lake Ammer."])
    prediction = stub_kirag(Constructor(lm), max_steps=3).predict([Question("q", "Where was the founder born?")])[0]
    assert prediction.chain == [A.text, C.text]
    assert [step["chosen_by"] for step in prediction.trace] == ["constructor", "constructor"]
    assert lm.calls == 2 and prediction.llm_calls == 2


def test_stub_constructor_falls_back_to_the_aligner_and_counts_it():
    # The LM invents a fact about another entity: a near copy of A in words (F1 0.83), but not A's head.
    lm = ScriptedChatLM(["<Ostrel Brewery; founded by; Ana Corvel>\nSo the answer is: Ana Corvel."])
    prediction = stub_kirag(Constructor(lm), max_steps=2).predict([Question("q", "Who founded Ostrel Brewing?")])[0]
    assert prediction.chain == [A.text, C.text] and prediction.fallbacks == 2  # the Aligner's best, twice
    assert [step["chosen_by"] for step in prediction.trace] == [FALLBACK] * 2
    assert stub_kirag(max_steps=2).predict([Question("q", "?")])[0].fallbacks is None  # no Constructor


class EchoingChatLM:
    """Restates the whole chain so far (each triple reworded: "was" before the relation), then copies the
    first candidate: a Constructor LM that repeats itself."""

    def chat(self, conversations, **kwargs):
        replies = []
        for messages in conversations:
            user = messages[-1]["content"]
            chain = user.split("Reasoning chain so far: ", 1)[1]
            restated = [f"<{h}; was {r}; {t}>" for h, r, t in
                        (part.split("; ") for part in re.findall(r"<([^<>]*)>", chain))]
            first = re.search(r"^1\. (<.*>)$", user, re.MULTILINE).group(1)
            replies.append(type("G", (), {"text": "\n".join([*restated, first])})())
        return replies


@pytest.mark.parametrize("mode", ["aligner", "constructor"])
def test_demo_chains_have_distinct_triples(mode, demo, retriever, kg, tiny_encoder):
    constructor = Constructor(EchoingChatLM()) if mode == "constructor" else None
    predictions = KiRAG(retriever, kg, TripleIndex(tiny_encoder), constructor, KiRAGSettings(max_steps=4)).predict(
        demo.questions[:6])
    for p in predictions:
        assert len(p.chain) == 4 and {step["chosen_by"] for step in p.trace} == {mode}, p.trace
        assert len({text.lower() for text in p.chain}) == len(p.chain), p.chain


# --- a Constructor that helps a small LM: fewer candidates, and the stop policy ---------------------------

def test_the_constructor_sees_only_the_aligners_best_candidates():
    constructor = ScriptedConstructor()  # picks the last candidate it is shown
    method = KiRAG(StubRetriever(), StubKG(), TripleIndex(ScoreEncoder()), constructor,
                   KiRAGSettings(k0=2, num_candidates=4, max_steps=2, constructor_candidates=2), k=10)
    (prediction,) = method.predict([Question("q", "Where was the founder of Ostrel Brewing born?")])
    assert [[t.text for t in cands] for call in constructor.seen for _, _, cands in call] == [[A.text, C.text],
                                                                                             [A.text, B.text]]
    assert prediction.chain == [C.text, B.text]  # the last of the best two at each step
    assert [len(step["candidates"]) for step in prediction.trace] == [4, 3]  # the Aligner still keeps N
    assert prediction.passages == [("p1", 0.75), ("p2", 0.5)]
    everything = ScriptedConstructor()
    KiRAG(StubRetriever(), StubKG(), TripleIndex(ScoreEncoder()), everything,
          KiRAGSettings(k0=2, num_candidates=4, max_steps=1), k=10).predict([Question("q", "?")])
    assert [len(cands) for _, _, cands in everything.seen[0]] == [4]  # the default: all N


ANSWER_ONLY = "So the answer is: Drusk."  # the chain [A] does not name Drusk


@pytest.mark.parametrize("stop, replies, chain, calls, fallbacks", [
    # the LM claims an answer the chain does not hold: the paper's policy stops, answer_in_chain goes on with
    # the Aligner's best while the budget (4 steps) allows
    ("constructor", [A.text, ANSWER_ONLY], [A.text], 2, 0),
    ("answer_in_chain", [A.text, ANSWER_ONLY], [A.text, C.text, B.text, D.text], 4, 3),
    # the chain's last tail is the answer: both stop, with nothing appended
    ("constructor", [A.text, "So the answer is: Ana Corvel."], [A.text], 2, 0),
    ("answer_in_chain", [A.text, "So the answer is: Ana Corvel."], [A.text], 2, 0),
    # the new triple's tail is the answer: both stop after appending it
    ("constructor", [A.text, f"{C.text}\nSo the answer is: Lake Ammer."], [A.text, C.text], 2, 0),
    ("answer_in_chain", [A.text, f"{C.text}\nSo the answer is: Lake Ammer."], [A.text, C.text], 2, 0),
    # never at the first step, under either policy
    ("answer_in_chain", [f"{A.text}\nSo the answer is: Ana Corvel.", D.text, ANSWER_ONLY],
     [A.text, D.text, C.text, B.text], 4, 2),
])
def test_stop_policies(stop, replies, chain, calls, fallbacks):
    lm = ScriptedChatLM(replies)
    method = KiRAG(StubRetriever(), StubKG(), TripleIndex(ScoreEncoder()), Constructor(lm),
                   KiRAGSettings(k0=2, num_candidates=4, max_steps=4, stop=stop), k=10)
    (prediction,) = method.predict([Question("q", "Where was the founder of Ostrel Brewing born?")])
    assert prediction.chain == chain
    assert (prediction.llm_calls, prediction.retrieval_calls, prediction.fallbacks) == (calls, calls, fallbacks)


@pytest.mark.parametrize("settings, message", [
    ({"constructor_candidates": 0}, "constructor_candidates must be at least 1"),
    ({"constructor_candidates": 21}, r"constructor_candidates must be at most num_candidates \(20\), got 21"),
    ({"stop": "never"}, "stop must be one of constructor, answer_in_chain")])
def test_bad_constructor_settings_are_refused(settings, message):
    with pytest.raises(ValueError, match=message):
        KiRAGSettings(**settings)
