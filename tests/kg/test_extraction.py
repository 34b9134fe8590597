"""Prompt building, demonstration choice, extraction into the store, resuming, and on-demand extraction."""

from dataclasses import dataclass

import numpy as np
import pytest

from core.types import Passage, Triple
from kg.extraction import TripleExtractor
from kg.graph import KnowledgeGraph
from kg.prompt import INSTRUCTION, Demo, DemoSelector, build_prompt, load_demos
from kg.store import KGStore
from kg.triple_parser import parse_triples

KEYWORDS = ["river", "band", "film", "city"]


class KeywordEncoder:
    """A deterministic stand-in encoder: one dimension per keyword, counting its occurrences."""

    def __init__(self):
        self.calls = 0

    def encode(self, texts, kind="passage", show_progress=False):
        self.calls += 1
        return np.array([[t.lower().count(k) + 0.01 * (i + 1) for i, k in enumerate(KEYWORDS)] for t in texts])


DEMOS = [
    Demo("Tell (river)", "The Tell is a river. A river of the north.", (("Tell", "is a", "river"),)),
    Demo("Loud Ones", "The Loud Ones are a band.", (("Loud Ones", "is a", "band"), ("Loud Ones", "members", "A, B"))),
    Demo("Glass", "Glass is a film.", (("Glass", "is a", "film"),)),
    Demo("Marsk", "Marsk is a city.", (("Marsk", "is a", "city"),)),
]


@dataclass
class FakeGeneration:
    text: str


class FakeLM:
    """Answers each conversation with triples derived from its last user message; can fail after k calls."""

    def __init__(self, fail_after: int | None = None):
        self.fail_after = fail_after
        self.calls: list[list[list[dict]]] = []

    def chat(self, conversations, max_new_tokens=256, batch_size=8, stop_repeated_lines=False):
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise RuntimeError("injected crash")
        self.calls.append(conversations)
        return [FakeGeneration(self.reply(c[-1]["content"])) for c in conversations]

    @staticmethod
    def reply(user: str) -> str:
        title = user.split("\n")[0].removeprefix("Title: ")
        first_word = user.split("\nText: ")[1].split()[0]
        return f"1. <{title}; starts with; {first_word}>\n2. <{title}; faces; the sea, the ocean>\n3. <broken; triple>"

    @property
    def passages_seen(self) -> list[str]:
        return [c[-1]["content"] for batch in self.calls for c in batch]


def corpus(n: int) -> list[Passage]:
    return [Passage.make(f"Place {i}", f"Place {i} lies by a river. It faces the sea.") for i in range(n)]


def test_packaged_pool_has_twenty_complete_demonstrations():
    demos = load_demos()
    assert len(demos) == 20
    assert len({d.title for d in demos}) == 20
    assert all(5 <= len(d.triples) <= 10 for d in demos)
    assert all(any(h == d.title or h in d.title for h, _, _ in d.triples) for d in demos)
    assert any("," in t for d in demos for _, _, t in d.triples)  # comma-joined tails are demonstrated


def test_prompt_is_instruction_then_demo_turns_then_passage():
    passage = Passage.make("Vell", "Vell is a river.")
    messages = build_prompt(passage, DEMOS[:2])
    assert messages[0] == {"role": "system", "content": INSTRUCTION}
    assert [m["role"] for m in messages[1:]] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[1]["content"] == "Title: Tell (river)\nText: The Tell is a river. A river of the north."
    assert messages[4]["content"] == "<Loud Ones; is a; band>\n<Loud Ones; members; A, B>"
    assert parse_triples(messages[4]["content"])[0] == list(DEMOS[1].triples)
    assert messages[-1]["content"] == "Title: Vell\nText: Vell is a river."
    for phrase in ("<head entity; relation; tail entity>", "title", "commas"):
        assert phrase in INSTRUCTION


def test_demonstrations_are_the_most_similar_first():
    extractor = TripleExtractor(FakeLM(), encoder=KeywordEncoder(), demos=DEMOS, num_demos=2)
    passages = [Passage.make("A", "The film about a band, a band and a band."),
                Passage.make("B", "A river city by a river.")]
    prompts = extractor.prompts(passages)
    demo_titles = [[m["content"].split("\n")[0] for m in p[1:-1:2]] for p in prompts]
    assert demo_titles == [["Title: Loud Ones", "Title: Glass"], ["Title: Tell (river)", "Title: Marsk"]]


def test_the_pool_is_embedded_once():
    encoder = KeywordEncoder()
    selector = DemoSelector(encoder, DEMOS)
    assert selector.choose(corpus(2), 1) == [(0,), (0,)]  # river: Tell (river)
    selector.choose(corpus(3), 1)
    assert encoder.calls == 3  # the pool once, then each call's passages


def test_passages_are_extracted_grouped_by_their_demonstrations(tmp_path):
    """Prompts sharing their demonstrations run one after another (a shared prefix for llama.cpp's
    cache), in corpus order within a group; every passage is still stored under its own id."""
    kinds = ["film", "river", "band", "river", "film", "band", "river"]
    passages = [Passage.make(f"P{i}", f"A {kind} and a {kind}.") for i, kind in enumerate(kinds)]
    lm, store = FakeLM(), KGStore(tmp_path)
    extractor = TripleExtractor(lm, encoder=KeywordEncoder(), demos=DEMOS, num_demos=2, batch_size=3)
    extractor.extract_into(store, passages, show_progress=False)
    seen = [text.split("\n")[0].removeprefix("Title: ") for text in lm.passages_seen]
    assert seen == ["P1", "P3", "P6", "P2", "P5", "P0", "P4"]  # river (demo 0), band (1), film (2)
    assert [len(batch) for batch in lm.calls] == [3, 3, 1]
    first_demos = [[m["content"] for m in c[1:-1:2]] for batch in lm.calls for c in batch]
    assert [d[0].split("\n")[0] for d in first_demos] == ["Title: Tell (river)"] * 3 + ["Title: Loud Ones"] * 2 + [
        "Title: Glass"] * 2
    assert sorted(store.passage_ids()) == sorted(p.id for p in passages)
    assert all(store.get(p.id)[0].text == f"<P{i}; starts with; A>" for i, p in enumerate(passages))


def test_no_demonstrations_needs_no_encoder():
    extractor = TripleExtractor(FakeLM(), num_demos=0)
    (prompt,) = extractor.prompts(corpus(1))
    assert [m["role"] for m in prompt] == ["system", "user"]
    with pytest.raises(ValueError, match="num_demos"):
        TripleExtractor(FakeLM(), encoder=KeywordEncoder(), demos=DEMOS, num_demos=5)


def test_extract_parses_outputs_into_triples_with_sentences():
    lm = FakeLM()
    passages = corpus(3)
    extractor = TripleExtractor(lm, encoder=KeywordEncoder(), demos=DEMOS, num_demos=1, batch_size=2)
    result = extractor.extract(passages + passages[:1])
    assert [len(batch) for batch in lm.calls] == [2, 1]  # duplicates dropped, batches of 2
    triples, rejected = result[passages[1].id]
    assert rejected == 1
    assert [t.text for t in triples] == ["<Place 1; starts with; Place>", "<Place 1; faces; the sea, the ocean>"]
    assert all(t.passage_id == passages[1].id for t in triples)
    assert [t.sentence_index for t in triples] == [0, 1]


def test_extract_into_a_store_skips_what_is_stored(tmp_path):
    passages = corpus(5)
    store = KGStore(tmp_path)
    extractor = TripleExtractor(FakeLM(), num_demos=0, batch_size=2)
    summary = extractor.extract_into(store, passages[:2], show_progress=False)
    assert summary | {"seconds": 0} == {"passages": 2, "already_stored": 0, "extracted": 2, "replaced": 0,
                                        "triples": 4, "rejected": 2, "seconds": 0}
    lm = FakeLM()
    summary = TripleExtractor(lm, num_demos=0, batch_size=2).extract_into(store, passages, show_progress=False)
    assert (summary["already_stored"], summary["extracted"]) == (2, 3)
    assert lm.passages_seen == [f"Title: {p.title}\nText: {p.text}" for p in passages[2:]]
    assert KGStore(tmp_path).get(passages[4].id) == store.get(passages[4].id) != []


class SilentOnLM(FakeLM):
    """Gives no triples for the passages whose title is in `silent`."""

    def __init__(self, silent=()):
        super().__init__()
        self.silent = set(silent)

    def reply(self, user: str) -> str:
        return "nothing" if user.split("\n")[0].removeprefix("Title: ") in self.silent else FakeLM.reply(user)


def test_retry_empty_extracts_again_only_what_the_lm_left_without_triples(tmp_path):
    passages = corpus(4)
    store = KGStore(tmp_path)
    store.add(passages[3].id, [], source="openie")  # imported, not the LM's: never retried
    TripleExtractor(SilentOnLM({"Place 0", "Place 1"}), num_demos=0).extract_into(store, passages, show_progress=False)
    assert [len(store.get(p.id)) for p in passages] == [0, 0, 2, 0]

    lm = FakeLM()
    plain = TripleExtractor(lm, num_demos=0).extract_into(store, passages, show_progress=False)
    assert (plain["extracted"], lm.calls) == (0, [])

    lm = SilentOnLM({"Place 1"})
    summary = TripleExtractor(lm, num_demos=0).extract_into(store, passages, show_progress=False, retry_empty=True)
    assert lm.passages_seen == [f"Title: {p.title}\nText: {p.text}" for p in passages[:2]]
    assert (summary["extracted"], summary["replaced"], summary["already_stored"]) == (2, 1, 2)
    again = KGStore(tmp_path)
    assert [len(again.get(p.id)) for p in passages] == [2, 0, 2, 0]
    assert again.get(passages[0].id)[0].text == "<Place 0; starts with; Place>"
    assert again.passage_ids() == store.passage_ids()


def test_crash_then_resume_equals_an_uninterrupted_run(tmp_path):
    passages = corpus(7)
    def run(lm, folder):
        return TripleExtractor(lm, num_demos=0, batch_size=2).extract_into(KGStore(folder), passages, show_progress=False)

    run(FakeLM(), tmp_path / "whole")

    with pytest.raises(RuntimeError, match="injected"):
        run(FakeLM(fail_after=2), tmp_path / "resumed")
    assert len(KGStore(tmp_path / "resumed")) == 4  # two finished batches survived
    lm = FakeLM()
    summary = run(lm, tmp_path / "resumed")
    assert summary["extracted"] == 3 and len(lm.passages_seen) == 3
    whole, resumed = (tmp_path / "whole" / "triples.jsonl"), (tmp_path / "resumed" / "triples.jsonl")
    assert resumed.read_bytes() == whole.read_bytes()


def test_knowledge_graph_extracts_missing_passages_once_and_caches_them(tmp_path):
    passages = corpus(4)
    by_id = {p.id: p for p in passages}
    lm = FakeLM()
    graph = KnowledgeGraph(KGStore(tmp_path), TripleExtractor(lm, num_demos=0), by_id)
    first = graph.get(passages[0].id)
    assert first and all(isinstance(t, Triple) for t in first)
    assert graph.get(passages[0].id) == first
    many = graph.get_many([passages[1].id, passages[0].id, passages[2].id])
    assert list(many) == [passages[1].id, passages[0].id, passages[2].id]
    assert len(lm.calls) == 2 and len(lm.passages_seen) == 3  # one call for p0, one batch for p1 and p2
    reopened = KnowledgeGraph(KGStore(tmp_path), None, by_id)
    assert reopened.get(passages[2].id) == many[passages[2].id]
    with pytest.raises(KeyError, match="no extractor"):
        reopened.get(passages[3].id)
    with pytest.raises(KeyError, match="not in the corpus"):
        graph.get("unknown")


def test_extraction_with_the_tiny_lm(tmp_path, request):
    pytest.importorskip("models.lm.interface")
    try:
        lm = request.getfixturevalue("tiny_lm")
    except pytest.FixtureLookupError:
        pytest.skip("the tiny_lm fixture is not in tests/conftest.py yet")
    passages = [Passage.make("Vell", "Vell is a river."), Passage.make("Drusk", "Drusk is a town.")]
    store = KGStore(tmp_path)
    extractor = TripleExtractor(lm, num_demos=0, batch_size=2, max_new_tokens=8)
    summary = extractor.extract_into(store, passages, show_progress=False)
    assert summary["extracted"] == 2 and len(KGStore(tmp_path)) == 2
    assert all(t.head and t.relation and t.tail for t in store.triples())
