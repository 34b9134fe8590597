"""MIND's pieces: entity parsing and spans, the filters on hand-set confidences, the trigger's parameters."""

import re
from dataclasses import replace

import pytest

from core.types import Question
from inference.memory import Memory
from inference.methods import Prediction
from inference.mind import (ENTITY_DEMOS, Entity, Found, KiRAGSearch, MindRAG, MindRun, MindSettings, final_answer,
                            parse_entities, ranked_passages, token_range)
from inference.memory import Fact
from models.uncertainty import MindParams


def test_parse_entities_drops_numbering_and_duplicates():
    text = "1. Ana Corvel\n- Ostrel Brewing\n\n2) ana corvel\nLake Ammer."
    found = parse_entities(text)
    assert [e for e, _, _ in found] == ["Ana Corvel", "Ostrel Brewing", "Lake Ammer"]
    for entity, start, end in found:
        assert text[start:end] == entity


def test_token_range_covers_the_overlapping_pieces():
    pieces = ["1", ".", " Ana", " Cor", "vel", "\n", "Lake"]
    text = "".join(pieces)
    start = text.index("Ana Corvel")
    assert token_range(pieces, start, start + len("Ana Corvel")) == (2, 5)
    assert token_range(pieces, 100, 105) == (0, 0)


class ScriptedLM:
    def __init__(self, reply):
        self.reply, self.calls = reply, 0

    def chat(self, conversations, **kwargs):
        self.calls += 1
        return [type("G", (), {"text": self.reply})()]


ENTITIES = [Entity("Ana Corvel", 0.9), Entity("Drusk", 0.4), Entity("Lake Ammer", 0.7)]


@pytest.mark.parametrize("name, reply, params, expected, selection", [
    ("none", "", MindParams(), ["Ana Corvel", "Drusk", "Lake Ammer"], "threshold"),
    ("cot", "2, 3", MindParams(), ["Drusk", "Lake Ammer"], "threshold"),
    ("cot", "none of them", MindParams(), [], "threshold"),
    ("confidence", "", MindParams(), ["Ana Corvel", "Lake Ammer"], "threshold"),  # top 2
    ("confidence", "", MindParams(threshold=0.5), ["Ana Corvel", "Lake Ammer"], "threshold"),
    ("confidence", "", MindParams(threshold=0.8), ["Ana Corvel"], "threshold"),
    ("cot+confidence", "2, 3", MindParams(), ["Lake Ammer", "Drusk"], "threshold"),  # CoT first, then ranked
    ("cot+confidence", "2, 3", MindParams(threshold=0.5), ["Lake Ammer"], "threshold"),
    ("confidence", "", MindParams(threshold=0.95), ["Ana Corvel", "Lake Ammer"], "top"),  # the threshold unread
    ("cot+confidence", "2, 3", MindParams(threshold=0.95), ["Lake Ammer", "Drusk"], "top"),
    ("cot+confidence", "2, 3", MindParams(threshold=0.95), [], "threshold"),
])
def test_filters(name, reply, params, expected, selection):
    lm = ScriptedLM(reply)
    mind = MindRAG(lm, search=None, params=params,
                   settings=MindSettings(entity_filter=name, top_entities=2, entity_selection=selection))
    state = MindRun(Question("q", "Where was the founder of Ostrel Brewing born?"), Memory())
    assert [e.text for e in mind._filter(state, list(ENTITIES))] == expected
    assert lm.calls == state.llm_calls == ("cot" in name)


class LoopingLM:
    """Writes the same sentence forever, with flat signals."""

    def __init__(self):
        self.calls, self.prompts = 0, []

    def format_chat(self, messages):
        return "prompt"

    def generate(self, prompts, **kwargs):
        import torch

        from models.lm.interface import Generation, TokenSignals

        self.calls += 1
        self.prompts.extend(prompts)
        pieces = ["Drusk", " is", " a", " village"]
        signals = TokenSignals(pieces, torch.full((4,), 0.1), torch.full((4,), 0.1), torch.full((4,), 0.1))
        return [Generation("Drusk is a village", 1, 4, [1, 2, 3, 4], signals)]


def test_the_loop_stops_when_a_sentence_repeats_then_completes_the_answer():
    lm = LoopingLM()
    run = MindRAG(lm, None, trigger="never", settings=MindSettings(max_sentences=6)).run(Question("q", "Where?"))
    # Two sentence generations (the second repeats), then one to complete "So the answer is".
    assert run.answer == "Drusk is a village. So the answer is Drusk is a village." and lm.calls == 3
    assert run.retrieval_calls == 0 and run.trace[-1] == {"sentence": "So the answer is Drusk is a village",
                                                          "retrieve": False, "forced_answer": True}
    assert lm.prompts[-1] == "prompt" + "Drusk is a village. So the answer is"
    assert final_answer(run.answer) == "Drusk is a village"


@pytest.mark.parametrize("trigger, params, threshold", [
    ("dynamic", MindParams(), 0.2),  # θ = 1·mean(H) + 1·mean(A) = 0.1 + 0.1
    ("dynamic", MindParams(alpha=3.0, beta=0.5), 0.35),
    ("fixed", MindParams(alpha=3.0, beta=0.5), 0.05),  # DRAGIN's θ ignores α and β
])
def test_the_trigger_decides_with_the_given_params(trigger, params, threshold):
    settings = MindSettings(fixed_threshold=0.05, max_sentences=1)
    run = MindRAG(LoopingLM(), None, trigger=trigger, params=params, settings=settings).run(
        Question("q", "Where?"))
    first = run.trace[0]
    assert first["threshold"] == pytest.approx(threshold) and first["max_score"] == pytest.approx(0.01)
    assert first["word"] == "Drusk" and not first["retrieve"] and run.retrieval_calls == 0


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="trigger must be one of never, always, random, fixed, dynamic"):
        MindRAG(None, None, trigger="sometimes")
    with pytest.raises(ValueError, match="entity_signals must be one of reasoning, extraction"):
        MindSettings(entity_signals="prompt")
    with pytest.raises(ValueError, match="subquery must be one of entities, refined"):
        MindSettings(subquery="rewritten")
    with pytest.raises(ValueError, match="entity_selection must be one of threshold, top"):
        MindSettings(entity_selection="all")
    for rate in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="random_rate must be in"):
            MindSettings(random_rate=rate)
    with pytest.raises(ValueError, match="threshold_scale must be at least 0"):
        MindSettings(threshold_scale=-1.0)
    with pytest.raises(ValueError, match="entity_filter must be one of none, cot, confidence, cot\\+confidence"):
        MindSettings(entity_filter="cot+none")
    with pytest.raises(ValueError, match="attention must be one of raw, sentence"):
        MindSettings(attention="max")
    sentence = MindSettings(attention="sentence")
    with pytest.raises(ValueError, match="calibrated on raw attention, and MIND reads sentence attention"):
        MindRAG(None, None, params=MindParams(attention="raw"), settings=sentence)
    assert MindRAG(None, None, params=MindParams(attention="sentence"), settings=sentence).settings is sentence
    assert MindRAG(None, None, params=MindParams(), settings=sentence).settings is sentence  # hand-set: any


# --- the loop end to end: a scripted LM (texts and per-token signals) and a stub search -------------------


def scripted_generation(pieces, entropy, attention, in_sentence=None):
    """A generation with these per-token signals; the attention renormalised over the sentence is 0 unless given."""
    import torch

    from models.lm.interface import Generation, TokenSignals

    n = len(pieces)
    signals = TokenSignals(list(pieces), torch.tensor(entropy, dtype=torch.float32),
                           torch.tensor(attention, dtype=torch.float32),
                           torch.tensor(in_sentence or [0.0] * n, dtype=torch.float32))
    return Generation("".join(pieces), 1, n, list(range(n)), signals)


def sentence(text, entropy, attention):
    """A sentence as word pieces (" word"), every piece with the same entropy and attention."""
    pieces = re.findall(r"\s*[\w']+|\s*[^\w\s]", text)
    assert "".join(pieces) == text
    return scripted_generation(pieces, [entropy] * len(pieces), [attention] * len(pieces))


def extraction(*entities):
    """An entity-extraction output, one entity per line; each entity's pieces carry its (entropy, attention)."""
    pieces, entropy, attention = [], [], []
    for i, (name, h, a) in enumerate(entities):
        words = name.split(" ")
        for j, word in enumerate(words):
            pieces.append(("" if j == 0 else " ") + word)
            entropy.append(h)
            attention.append(a)
        if i < len(entities) - 1:
            pieces.append("\n")
            entropy.append(9.0)  # the newline belongs to no entity: were it read, the confidence would change
            attention.append(9.0)
    return scripted_generation(pieces, entropy, attention)


class ScriptedMindLM:
    """`generate` answers the i-th sentence of `sentences`, `chat` the i-th of `chats`; prompts are recorded,
    and whether signals were asked for: without, a generation has none, as from a real backend."""

    def __init__(self, sentences, chats=()):
        self.sentences, self.chats = list(sentences), list(chats)
        self.prompts, self.conversations = [], []
        self.generate_signals, self.chat_signals = [], []

    def format_chat(self, messages):
        return "\n".join(m["content"] for m in messages) + "\nA:"

    def generate(self, prompts, return_signals=False, **kwargs):
        self.prompts.extend(prompts)
        self.generate_signals.append(return_signals)
        assert self.sentences, f"unexpected generation for prompt ending {prompts[0][-80:]!r}"
        return [replace(self.sentences.pop(0), signals=None) if not return_signals else self.sentences.pop(0)]

    def chat(self, conversations, return_signals=False, **kwargs):
        self.conversations.extend(conversations)
        self.chat_signals.append(return_signals)
        assert self.chats, "unexpected chat call"
        return [self.chats.pop(0) if return_signals else replace(self.chats.pop(0), signals=None)]


class StubSearch:
    """Records its queries; the i-th call finds `results[i]` = (hits, facts), at the cost of one search."""

    def __init__(self, results):
        self.results, self.queries = list(results), []

    def search_with_facts(self, query, k):
        self.queries.append(query)
        hits, facts = self.results.pop(0)
        return Found(hits, facts, [pid for pid, _ in hits])


QUESTION = Question("q", "Where was the founder of Ostrel Brewing born?")
HIGH, LOW = (2.0, 0.5), (0.1, 0.1)  # S = H·A = 1.0 or 0.01 per content word; the fixed θ is 0.5
FIRST_FACTS = [("Ostrel Brewing: founded by Ana Corvel.", "p1"), ("Ana Corvel: born in Drusk.", "p2")]
SECOND_FACTS = [("Drusk: a village on Lake Ammer.", "p3"), ("ana corvel:  born in Drusk.", "p2"),
                ("Lake Ammer: a lake.", "p4")]


def two_hop_run():
    lm = ScriptedMindLM(
        sentences=[
            sentence("Ostrel Brewing was founded by Tomas Reyes", *HIGH),  # draft 1: triggers
            sentence("Ostrel Brewing was founded by Ana Corvel", *LOW),  # draft 1 regenerated with the facts
            sentence("Ana Corvel was born in Hallam", *HIGH),  # draft 2: triggers
            sentence("Ana Corvel was born in Drusk", *LOW),  # draft 2 regenerated
            sentence("So the answer is Drusk", *LOW),  # draft 3: no retrieval, the end
        ],
        chats=[
            # conf = γ/(1+H) + δ·A with γ = 1, δ = 0.25:
            # Ostrel Brewing 1/2 + 1/8 = 0.625, Ana Corvel 1/4 + 1/4 = 0.5
            extraction(("Ostrel Brewing", 1.0, 0.5), ("Ana Corvel", 3.0, 1.0)),
            # Ana Corvel again (already searched), and Drusk: 1/4 + 0 = 0.25
            extraction(("Ana Corvel", 3.0, 1.0), ("Drusk", 3.0, 0.0)),
        ],
    )
    search = StubSearch([([("p1", 3.0), ("p2", 2.0)], FIRST_FACTS), ([("p3", 5.0), ("p2", 1.0)], SECOND_FACTS)])
    mind = MindRAG(lm, search, trigger="fixed", params=MindParams(delta=0.25),
                   settings=MindSettings(fixed_threshold=0.5, entity_filter="none", retrieve_k=3, max_sentences=4,
                                         entity_signals="extraction"))  # the confidences below: the extraction's
    return lm, search, mind.run(QUESTION)


def test_loop_subquery_leaves_out_entities_already_searched():
    _, search, run = two_hop_run()
    assert search.queries == [f"{QUESTION.question} Ostrel Brewing Ana Corvel", f"{QUESTION.question} Drusk"]
    assert "Ana Corvel" not in search.queries[1] and run.retrieval_calls == 2
    assert [step.get("entities") for step in run.trace] == [[["Ostrel Brewing", 0.625], ["Ana Corvel", 0.5]],
                                                            [["Ana Corvel", 0.5], ["Drusk", 0.25]], None]
    assert [step["retrieve"] for step in run.trace] == [True, True, False]
    assert list(run.passages.items()) == [("p1", 3.0), ("p2", 2.0), ("p3", 5.0)]  # first score of each, in order


def test_loop_keeps_the_sentence_regenerated_with_the_retrieved_facts():
    lm, _, run = two_hop_run()
    assert run.answer == ("Ostrel Brewing was founded by Ana Corvel. Ana Corvel was born in Drusk. "
                          "So the answer is Drusk.")
    assert [(s["sentence"], s.get("regenerated")) for s in run.trace] == [
        ("Ostrel Brewing was founded by Tomas Reyes", "Ostrel Brewing was founded by Ana Corvel"),
        ("Ana Corvel was born in Hallam", "Ana Corvel was born in Drusk"),
        ("So the answer is Drusk", None)]
    draft, regeneration, draft2, regeneration2, _ = lm.prompts
    assert "Facts:" not in draft  # nothing retrieved yet
    assert ("Facts:\n- Ostrel Brewing: founded by Ana Corvel.\n- Ana Corvel: born in Drusk.\n\nQuestion: "
            in regeneration)
    assert regeneration.endswith("\nA:") and draft2.endswith("\nA:Ostrel Brewing was founded by Ana Corvel. ")
    assert "- Drusk: a village on Lake Ammer." in regeneration2 and "- Lake Ammer: a lake." in regeneration2
    assert run.llm_calls == 7  # per hop: the draft, the extraction, the regeneration; then the last sentence


def test_loop_memory_confidence_is_the_entity_confidence_over_one_plus_rank():
    _, _, run = two_hop_run()
    confidences = {fact.text: fact.confidence for fact in run.memory.facts.values()}
    # hop 1: confidence 0.625 (the best fresh entity), facts at ranks 0, 1; hop 2: 0.25 (Drusk, the
    # only fresh entity), ranks 0, 1, 2; the repeated fact keeps the higher of 0.625/2 and 0.25/2.
    assert confidences == {
        "Ostrel Brewing: founded by Ana Corvel.": 0.625,
        "Ana Corvel: born in Drusk.": 0.625 / 2,
        "Drusk: a village on Lake Ammer.": 0.25,
        "Lake Ammer: a lake.": 0.25 / 3,
    }
    assert [fact.source for fact in run.memory.facts.values()] == ["p1", "p2", "p3", "p4"]


@pytest.mark.parametrize("trigger, params", [("fixed", MindParams()), ("dynamic", MindParams(alpha=0.0, beta=0.0))])
def test_a_stopword_only_sentence_never_retrieves_at_threshold_zero(trigger, params):
    # Every word is a stopword or punctuation, with large signals: S = H·A·s = 0 for every word, and θ = 0.
    lm = ScriptedMindLM(sentences=[sentence("It is of the, and to it", 5.0, 0.9),
                                   sentence(" Drusk", 0.1, 0.1)])  # the forced "So the answer is" ending
    search = StubSearch([])  # any search call fails: nothing to return
    run = MindRAG(lm, search, trigger=trigger, params=params,
                  settings=MindSettings(fixed_threshold=0.0, max_sentences=1)).run(QUESTION)
    first = run.trace[0]
    assert first["threshold"] == 0.0 and first["max_score"] == 0.0 and not first["retrieve"]
    assert search.queries == [] and run.retrieval_calls == 0 and lm.conversations == []
    assert run.answer == "It is of the, and to it. So the answer is Drusk."
    assert len(lm.prompts) == 2 and lm.sentences == []  # the sentence, then the forced ending: no regeneration


@pytest.mark.parametrize("trigger, record, answer, regenerated, asked", [
    # A draft has signals only where the trigger reads them or they are recorded; a regeneration never.
    ("never", False, "A Tomas. A Ana. So the answer is Drusk.", [None, None, None], [False] * 3),
    ("never", True, "A Tomas. A Ana. So the answer is Drusk.", [None, None, None], [True] * 3),
    ("always", False, "A Ana. So the answer is Hallam.", ["A Ana", "So the answer is Hallam"], [False] * 4),
    ("always", True, "A Ana. So the answer is Hallam.", ["A Ana", "So the answer is Hallam"], [True, False] * 2),
    ("dynamic", False, "A Ana. So the answer is Drusk.", ["A Ana", None], [True, False, True]),
])
def test_signals_are_asked_for_only_where_they_are_used(trigger, record, answer, regenerated, asked):
    lm = ScriptedMindLM(
        sentences=[sentence("A Tomas", *HIGH), sentence("A Ana", *LOW), sentence("So the answer is Drusk", *LOW),
                   sentence("So the answer is Hallam", *LOW)],
        chats=[extraction(("Ana Corvel", 1.0, 0.5))] * 2,
    )
    search = StubSearch([([("p1", 3.0)], FIRST_FACTS[:1])] * 2)
    # dynamic θ = 0.1·mean(H) + 0.1·mean(A): 0.25 < S = 1.0 for HIGH, 0.02 > S = 0.01 for LOW
    mind = MindRAG(lm, search, trigger=trigger, params=MindParams(alpha=0.1, beta=0.1),
                   settings=MindSettings(entity_filter="none", max_sentences=4), record_signals=record)
    run = mind.run(QUESTION)
    assert run.answer == answer
    assert [step.get("regenerated") for step in run.trace] == regenerated
    assert [step["retrieve"] for step in run.trace] == [r is not None for r in regenerated]
    assert all(("signals" in step) == record for step in run.trace)
    assert lm.generate_signals == asked and lm.chat_signals == [True] * len(search.queries)


def test_always_retrieves_for_every_sentence_with_a_word():
    # A sentence of stopwords and punctuation retrieves too; an empty one (whitespace only) ends the reasoning.
    lm = ScriptedMindLM(sentences=[sentence("It is of the, and to it", *LOW), sentence("A Ana", *LOW),
                                   scripted_generation([" ", "\n"], [2.0, 2.0], [0.5, 0.5]), sentence(" Drusk", *LOW)],
                        chats=[extraction(("Ana Corvel", 1.0, 0.5))])
    search = StubSearch([([("p1", 3.0)], FIRST_FACTS[:1])])
    run = MindRAG(lm, search, trigger="always",
                  settings=MindSettings(entity_filter="none", max_sentences=4)).run(QUESTION)
    assert [(step["sentence"], step["retrieve"]) for step in run.trace] == [
        ("It is of the, and to it", True), (" \n", False), ("So the answer is Drusk", False)]
    assert run.answer == "A Ana. So the answer is Drusk." and lm.generate_signals == [False] * 4


# --- which attention: raw or renormalised over the sentence -------------------------------------------------


@pytest.mark.parametrize("attention, retrieves", [("raw", True), ("sentence", False)])
def test_the_trigger_reads_the_chosen_attention_and_traces_record_both(attention, retrieves):
    # S = H·A: raw 2.0·0.5 = 1.0 > θ = 0.5; renormalised 2.0·0.1 = 0.2 < 0.5
    draft = scripted_generation(["Ana", " Corvel"], [2.0, 2.0], [0.5, 0.5], in_sentence=[0.1, 0.1])
    lm = ScriptedMindLM(sentences=[draft, sentence("Ana Corvel", *LOW), sentence(" Drusk", *LOW)],
                        chats=[extraction(("Ana Corvel", 1.0, 0.5))])
    search = StubSearch([([("p1", 3.0)], FIRST_FACTS[:1])])
    settings = MindSettings(fixed_threshold=0.5, entity_filter="none", max_sentences=1, attention=attention)
    run = MindRAG(lm, search, trigger="fixed", settings=settings, record_signals=True).run(QUESTION)
    first = run.trace[0]
    assert first["retrieve"] == retrieves and first["max_score"] == pytest.approx(1.0 if retrieves else 0.2)
    assert first["signals"] == {"entropy": [2.0, 2.0], "content": [1.0, 1.0], "attention": [0.5, 0.5],
                                "attention_in_sentence": pytest.approx([0.1, 0.1])}


@pytest.mark.parametrize("attention, confidence", [("raw", 0.5 + 0.5 * 0.2), ("sentence", 0.5 + 0.5 * 0.8)])
def test_the_entity_confidence_reads_the_chosen_attention(attention, confidence):
    output = scripted_generation(["Ana", " Corvel"], [1.0, 1.0], [0.2, 0.2], in_sentence=[0.8, 0.8])
    mind = MindRAG(ScriptedMindLM([], chats=[output]), None, params=MindParams(gamma=1.0, delta=0.5),
                   settings=MindSettings(attention=attention))
    (entity,) = mind.entities(QUESTION.question, "")
    assert entity.text == "Ana Corvel" and entity.confidence == pytest.approx(confidence)  # γ/(1+H) + δ·A
    assert entity.attention == pytest.approx([0.2, 0.2]) and entity.attention_in_sentence == pytest.approx([0.8, 0.8])


# --- what a search costs ---------------------------------------------------------------------------------


class CostlySearch(StubSearch):
    """Each search costs `searches` retrievals and `llm_calls` LLM calls, and saw `seen` passages."""

    def __init__(self, results, searches, llm_calls, seen):
        super().__init__(results)
        self.searches, self.llm_calls, self.seen = searches, llm_calls, seen

    def search_with_facts(self, query, k):
        found = super().search_with_facts(query, k)
        return Found(found.hits, found.facts, self.seen, self.searches, self.llm_calls)


def test_every_search_and_llm_call_of_a_search_is_counted():
    lm = ScriptedMindLM(sentences=[sentence("A Tomas", *HIGH), sentence("A Ana", *LOW), sentence(" Drusk", *LOW)],
                        chats=[extraction(("Ana Corvel", 1.0, 0.5))])
    search = CostlySearch([([("p1", 3.0)], FIRST_FACTS[:1])], searches=3, llm_calls=2, seen=["p1", "p7", "p9"])
    mind = MindRAG(lm, search, trigger="fixed",
                   settings=MindSettings(fixed_threshold=0.5, entity_filter="none", max_sentences=1))
    (prediction,) = mind.predict([QUESTION])
    assert prediction.retrieval_calls == 3 and prediction.trace[0]["searches"] == 3
    # the draft, the extraction, the regeneration, the forced ending: 4, and the search's own 2
    assert prediction.llm_calls == 4 + 2
    assert prediction.passages == [("p1", 3.0)] and prediction.retrieved == ["p1", "p7", "p9"]


class FakeKiRAG:
    def __init__(self, prediction):
        self.prediction, self.questions = prediction, []

    def predict(self, questions):
        self.questions.extend(questions)
        return [self.prediction]


def test_kirag_search_reports_the_whole_loops_cost():
    inner = Prediction("mind-subquery", [("p2", 0.9), ("p1", 0.5), ("p3", 0.1)], retrieval_calls=4, llm_calls=3,
                       chain=["<a; b; c>", "<c; d; e>"], retrieved=["p1", "p2", "p3", "p4"])
    kirag = FakeKiRAG(inner)
    found = KiRAGSearch(kirag).search_with_facts("who?", 2)
    assert [q.question for q in kirag.questions] == ["who?"]
    # all of the loop's ranking, not MIND's 2 passages of a single search: kirag+mind keeps what KiRAG alone would
    assert found == Found([("p2", 0.9), ("p1", 0.5), ("p3", 0.1)], [("<a; b; c>", "kirag"), ("<c; d; e>", "kirag")],
                          ["p1", "p2", "p3", "p4"], retrieval_calls=4, llm_calls=3)


# --- faithful signals, the refined sub-query, the random control, the threshold's scale ---------------------


def test_an_extraction_naming_three_entities_gives_three_each_with_its_span_in_the_reasoning():
    # The reasoning's two sentences, with signals; "Ana Corvel" is in both (the latest mention counts),
    # "Drusk" in the second only, "Ostrel Brewing" in neither (it is the question's): its extraction tokens.
    first = scripted_generation(["Ana", " Corvel", " made", " beer"], [9.0, 9.0, 9.0, 9.0], [0.0] * 4)
    second = scripted_generation(["Ana", " Corvel", " was", " born", " in", " Dr", "usk"],
                                 [1.0, 1.0, 5.0, 5.0, 5.0, 3.0, 3.0], [0.5, 0.5, 0.0, 0.0, 0.0, 0.25, 0.75])
    output = extraction(("Ostrel Brewing", 0.0, 0.0), ("Ana Corvel", 7.0, 7.0), ("Drusk", 7.0, 7.0))
    lm = ScriptedMindLM([], chats=[output])
    mind = MindRAG(lm, None, params=MindParams(gamma=1.0, delta=1.0))
    entities = mind.entities(QUESTION.question, "Ana Corvel made beer. Ana Corvel was born in Drusk",
                             [first.signals, second.signals])
    assert [e.text for e in entities] == ["Ostrel Brewing", "Ana Corvel", "Drusk"]
    assert [e.source for e in entities] == ["extraction", "reasoning", "reasoning"]
    assert [e.entropy for e in entities] == [[0.0, 0.0], [1.0, 1.0], [3.0, 3.0]]  # each its own tokens only
    assert [e.attention for e in entities] == [[0.0, 0.0], [0.5, 0.5], [0.25, 0.75]]
    # conf = max over the tokens of γ/(1+H) + δ·A
    assert [e.confidence for e in entities] == pytest.approx([1.0, 0.5 + 0.5, 0.25 + 0.75])
    (conversation,) = lm.conversations  # the demonstrations show a list, one entity per line
    assert [m["content"] for m in conversation[1:5]] == [text for demo in ENTITY_DEMOS for text in demo]


def test_extraction_signals_read_the_extraction_output_even_where_the_reasoning_names_the_entity():
    reasoning = scripted_generation(["Ana", " Corvel"], [1.0, 1.0], [0.5, 0.5])
    mind = MindRAG(ScriptedMindLM([], chats=[extraction(("Ana Corvel", 3.0, 0.0))]), None,
                   settings=MindSettings(entity_signals="extraction"))
    (entity,) = mind.entities(QUESTION.question, "Ana Corvel", [reasoning.signals])
    assert entity.source == "extraction" and entity.entropy == [3.0, 3.0]


def test_a_confidence_filter_on_the_reasoning_asks_every_draft_for_signals_whatever_the_trigger():
    lm = ScriptedMindLM(sentences=[sentence("Ana Corvel founded it", 1.0, 0.5), sentence("A Ana", *LOW),
                                   sentence(" Drusk", *LOW)],
                        chats=[extraction(("Ana Corvel", 3.0, 0.0))])
    search = StubSearch([([("p1", 3.0)], FIRST_FACTS[:1])])
    run = MindRAG(lm, search, trigger="always", params=MindParams(gamma=1.0, delta=1.0),
                  settings=MindSettings(entity_filter="confidence", max_sentences=1)).run(QUESTION)
    assert lm.generate_signals == [True, False, False]  # the draft; not its regeneration nor the forced ending
    assert run.trace[0]["entities"] == [["Ana Corvel", 1.0]]  # 1/(1+1) + 0.5 from the draft, not 1/(1+3)


def test_the_refined_subquery_is_the_lms_question_from_the_question_entities_and_memory():
    lm = ScriptedMindLM(sentences=[sentence("A Tomas", *HIGH), sentence("A Ana", *LOW), sentence(" Drusk", *LOW)],
                        chats=[extraction(("Ana Corvel", 1.0, 0.5)),
                               scripted_generation(["Where was Ana Corvel born?"], [0.0], [0.0])])
    search = StubSearch([([("p1", 3.0)], FIRST_FACTS[:1])])
    mind = MindRAG(lm, search, trigger="fixed", settings=MindSettings(fixed_threshold=0.5, entity_filter="none",
                                                                     max_sentences=1, subquery="refined"))
    (prediction,) = mind.predict([QUESTION])
    assert search.queries == ["Where was Ana Corvel born?"]
    request = lm.conversations[-1][-1]["content"]
    assert QUESTION.question in request and "Entities: Ana Corvel" in request and "Reasoning so far: A Tomas" in request
    assert prediction.llm_calls == 5  # the draft, the extraction, the sub-query, the regeneration, the ending


def test_an_empty_refined_subquery_falls_back_to_the_question_and_entities():
    lm = ScriptedMindLM(sentences=[sentence("A Tomas", *HIGH), sentence("A Ana", *LOW), sentence(" Drusk", *LOW)],
                        chats=[extraction(("Ana Corvel", 1.0, 0.5)), scripted_generation([" "], [0.0], [0.0])])
    search = StubSearch([([("p1", 3.0)], FIRST_FACTS[:1])])
    MindRAG(lm, search, trigger="fixed", settings=MindSettings(fixed_threshold=0.5, entity_filter="none",
                                                               max_sentences=1, subquery="refined")).run(QUESTION)
    assert search.queries == [f"{QUESTION.question} Ana Corvel"]


def random_runs(rate, seed, questions=200):
    """One sentence per question under the random trigger: which questions retrieved."""
    fired = []
    for i in range(questions):
        lm = ScriptedMindLM(sentences=[sentence("A Tomas", *LOW), sentence("A Ana", *LOW), sentence(" Drusk", *LOW)],
                            chats=[extraction(("Ana Corvel", 1.0, 0.5))])
        search = StubSearch([([("p1", 3.0)], FIRST_FACTS[:1])])
        settings = MindSettings(entity_filter="none", max_sentences=1, random_rate=rate, seed=seed)
        run = MindRAG(lm, search, trigger="random", settings=settings).run(Question(f"q{i}", QUESTION.question))
        if run.trace[0]["retrieve"]:
            fired.append(i)
    return fired


def test_the_random_trigger_fires_at_its_rate_the_same_way_for_a_seed():
    assert random_runs(0.0, 0, 20) == [] and random_runs(1.0, 0, 20) == list(range(20))
    fired = random_runs(0.3, 0)
    assert 40 <= len(fired) <= 80  # 60 expected of 200; the binomial's 99.9% range is about 39-83
    assert random_runs(0.3, 0) == fired and random_runs(0.3, 1) != fired


@pytest.mark.parametrize("scale, retrieves", [(1.0, True), (3.0, False), (0.0, True)])
def test_the_threshold_scale_multiplies_minds_threshold(scale, retrieves):
    # θ = s·(α·mean(H) + β·mean(A)) = s·(2.0 + 0.5) · 0.2 = 0.5·s against max S = 1.0
    lm = ScriptedMindLM(sentences=[sentence("Ana Corvel", *HIGH), sentence("Ana Corvel", *LOW),
                                   sentence(" Drusk", *LOW)], chats=[extraction(("Ana Corvel", 1.0, 0.5))])
    search = StubSearch([([("p1", 3.0)], FIRST_FACTS[:1])])
    mind = MindRAG(lm, search, trigger="dynamic", params=MindParams(alpha=0.2, beta=0.2),
                   settings=MindSettings(entity_filter="none", max_sentences=1, threshold_scale=scale))
    step = mind.run(QUESTION).trace[0]
    assert step["threshold"] == pytest.approx(0.5 * scale) and step["retrieve"] == retrieves
    assert mind.params.alpha == 0.2  # the saved parameters are unchanged


def test_passages_rank_by_the_memorys_confidence_then_in_the_order_retrieved():
    state = MindRun(QUESTION, Memory(3))
    state.passages = {"p1": 3.0, "p2": 2.0, "p5": 9.0, "p3": 1.0}
    for text, confidence, source in [("a", 0.5, "p1"), ("b", 0.5, "p2"), ("c", 0.9, "p3"), ("t", 0.95, "kirag")]:
        state.memory.add(Fact(text, confidence, source))  # capacity 3: "a" and "b" tie, the older goes
    assert ranked_passages(state) == [("p3", 1.0), ("p2", 2.0), ("p1", 3.0), ("p5", 9.0)]
