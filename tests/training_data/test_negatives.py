"""Candidate negatives: the retrieved passages' triples, without the chain, deterministic; sampled, or the
hardest by a trained Aligner without the chain's paraphrases."""

import numpy as np

from core.chains import aligner_query
from core.types import Passage, Triple
from inference.embedding_index import TripleIndex
from kg.graph import KnowledgeGraph
from kg.store import KGStore
from training_data.negatives import equivalent, hardest_negatives, mine_negatives

QUESTION = "In which town was the founder of Ostrel Brewing born?"
FOUNDED = Triple.make("Ostrel Brewing", "founded by", "Ana Corvel", "A")
BORN = Triple.make("Ana Corvel", "born in", "Drusk", "B")
TRIPLES = {
    "A": [FOUNDED, Triple.make("Ostrel Brewing", "located in", "Brenn", "A")],
    "B": [BORN, Triple.make("Ana Corvel", "studied in", "Velm", "B")],
    # C repeats both chain facts (as another passage would) next to two facts of its own.
    "C": [Triple.make("ostrel brewing", "Founded by", "Ana Corvel", "C"), Triple.make("Brenn", "is a", "town", "C"),
          Triple.make("Ana Corvel", "born in", "Drusk", "C"), Triple.make("Brenn", "lies on", "river Vell", "C")],
    "D": [Triple.make("Velm", "has", "university", "D")],  # never retrieved
}
PASSAGES = {pid: Passage(pid, pid, f"passage {pid}") for pid in TRIPLES}


class StubRetriever:
    """Returns fixed passages: A, C, B for the first query of a chain, then B, C."""

    def __init__(self):
        self.queries = []

    def search(self, queries, k):
        self.queries += queries
        return [[(pid, 1.0) for pid in (["A", "C", "B"] if "knowledge triples" not in q else ["B", "C"])][:k]
                for q in queries]


class StubExtractor:
    """Stands in for the LM: 'extracts' the fixed triples of a passage, and records the calls."""

    def __init__(self):
        self.calls = []

    def extract_into(self, store, passages, show_progress=True):
        self.calls.append([p.id for p in passages])
        store.add_many((p.id, TRIPLES[p.id], 0) for p in passages)


def knowledge_graph(tmp_path, stored=("A", "B", "C", "D"), extractor=None):
    store = KGStore(tmp_path / "kg")
    store.add_many(((pid, TRIPLES[pid], 0) for pid in stored), source="openie")
    return KnowledgeGraph(store, extractor, PASSAGES)


def test_negatives_are_the_retrieved_triples_without_the_chain_and_its_duplicates(tmp_path):
    retriever = StubRetriever()
    [negatives] = mine_negatives([("q1", QUESTION, [FOUNDED, BORN])], retriever, knowledge_graph(tmp_path), k0=3)
    assert retriever.queries == [aligner_query(QUESTION, []), aligner_query(QUESTION, [FOUNDED.text])]
    first, second = ([t.text for t in hop] for hop in negatives)
    assert first == ["<Ostrel Brewing; located in; Brenn>", "<Brenn; is a; town>", "<Brenn; lies on; river Vell>",
                     "<Ana Corvel; studied in; Velm>"]
    assert second == ["<Ana Corvel; studied in; Velm>", "<Brenn; is a; town>", "<Brenn; lies on; river Vell>"]
    chain_ids = {FOUNDED.id, BORN.id}
    assert all(t.id not in chain_ids and t.passage_id in "ABC" for hop in negatives for t in hop)


def test_sampling_is_deterministic_and_keeps_retrieval_order(tmp_path):
    kg = knowledge_graph(tmp_path)
    items = [("q1", QUESTION, [FOUNDED, BORN]), ("q2", QUESTION, [FOUNDED])]
    runs = [mine_negatives(items, StubRetriever(), kg, k0=3, max_negatives=2, seed=s) for s in (0, 0, 1, 2, 3)]
    assert runs[0] == runs[1]
    assert all(len(hop) == 2 for run in runs for negatives in run for hop in negatives)
    everything = [t.id for t in mine_negatives(items[:1], StubRetriever(), kg, k0=3)[0][0]]
    for run in runs:
        ids = [t.id for t in run[0][0]]
        assert ids == sorted(ids, key=everything.index)  # a subsequence, in retrieval order
    assert len({tuple(t.id for t in run[0][0]) for run in runs}) > 1  # the seed matters


def test_triples_of_retrieved_passages_missing_from_the_store_are_extracted(tmp_path):
    extractor = StubExtractor()
    kg = knowledge_graph(tmp_path, stored=("A", "B"), extractor=extractor)
    [negatives] = mine_negatives([("q1", QUESTION, [FOUNDED])], StubRetriever(), kg, k0=3)
    assert extractor.calls == [["C"]]
    assert "<Brenn; is a; town>" in [t.text for t in negatives[0]]


# --- a second round: the negatives a trained Aligner scores highest (ANCE-style) ----------------------------

HARD = {  # passage E states the chain's facts in other words, next to real distractors
    "E": [Triple.make("Ana Corvel", "birthplace", "Drusk", "E"),  # BORN's two entities: the same fact
          Triple.make("Drusk", "birthplace of", "Ana Corvel", "E"),  # the same, the other way round
          Triple.make("Ostrel Brewing", "founded by", "Ana Corvel Smith", "E"),  # a near copy of FOUNDED
          Triple.make("Ana Corvel", "died in", "Velm", "E"),
          Triple.make("Ostrel Brewing", "brews", "dark ale", "E"),
          Triple.make("Drusk", "lies on", "Lake Ammer", "E")],
}
# the trained Aligner's scores: the paraphrases highest, as an Aligner scores what its positive says
ALIGNER = {t.text: s for t, s in zip(HARD["E"], [0.9, 0.875, 0.85, 0.5, 0.75, 0.25])}


class ListKG:
    def get_many(self, pids):
        return {pid: list(HARD[pid]) for pid in pids}


class OneRetriever:
    def search(self, queries, k):
        return [[("E", 1.0)] for _ in queries]


class AlignerStub:
    """A query embeds as [1], a triple as [its score in ALIGNER]; records the queries it embeds."""

    def __init__(self):
        self.queries = []

    def encode(self, texts, kind="passage", batch_size=None, show_progress=True):
        if kind == "query":
            self.queries.extend(texts)
        return np.array([[1.0 if kind == "query" else ALIGNER[t]] for t in texts], dtype=np.float32)

    def fingerprint(self):
        return "aligner-stub"


def test_equivalent_triples_are_the_same_fact_in_other_words():
    born, paraphrase, reversed_, near, died, ale, lake = BORN, *HARD["E"]
    assert equivalent(born, Triple.make("ana corvel", "Born in", "Drusk.", "X"))  # the same normalised text
    assert equivalent(born, paraphrase) and equivalent(born, reversed_) and equivalent(FOUNDED, near)
    assert not any(equivalent(t, c) for t in (died, ale, lake) for c in (born, FOUNDED))


def test_the_hardest_negatives_are_the_aligners_best_without_the_chains_paraphrases():
    scorer = TripleIndex(AlignerStub())
    [negatives] = mine_negatives([("q1", QUESTION, [FOUNDED, BORN])], OneRetriever(), ListKG(), k0=1,
                                 max_negatives=2, scorer=scorer)
    assert [[t.text for t in hop] for hop in negatives] == [["<Ostrel Brewing; brews; dark ale>",
                                                             "<Ana Corvel; died in; Velm>"]] * 2
    assert scorer.encoder.queries == [aligner_query(QUESTION, []), aligner_query(QUESTION, [FOUNDED.text])]
    [everything] = mine_negatives([("q1", QUESTION, [FOUNDED, BORN])], OneRetriever(), ListKG(), k0=1, scorer=scorer)
    assert [t.text for t in everything[0]][-1] == "<Drusk; lies on; Lake Ammer>"  # best first, up to max_negatives
    [sampled] = mine_negatives([("q1", QUESTION, [FOUNDED, BORN])], OneRetriever(), ListKG(), k0=1)
    assert len(sampled[0]) == 6  # without a scorer: every candidate, paraphrases too (the sample of before)


def test_hardest_negatives_keep_the_first_of_equal_scores_and_stop_at_the_limit():
    triples = HARD["E"][3:]
    assert hardest_negatives(triples, np.array([0.5, 0.5, 0.75]), [], 2) == [triples[2], triples[0]]
    assert hardest_negatives([], np.zeros(0), [BORN], 3) == []
