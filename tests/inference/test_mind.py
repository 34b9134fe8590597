"""MIND's pieces: entity parsing and spans, the filters on hand-set confidences, the trigger's parameters."""

import pytest

from core.types import Question
from inference.memory import Memory
from inference.mind import Entity, MindRAG, MindRun, final_answer, parse_entities, token_range
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


@pytest.mark.parametrize("name, reply, params, expected", [
    ("none", "", MindParams(), ["Ana Corvel", "Drusk", "Lake Ammer"]),
    ("cot", "2, 3", MindParams(), ["Drusk", "Lake Ammer"]),
    ("cot", "none of them", MindParams(), []),
    ("confidence", "", MindParams(), ["Ana Corvel", "Lake Ammer"]),  # top 2
    ("confidence", "", MindParams(threshold=0.5), ["Ana Corvel", "Lake Ammer"]),
    ("confidence", "", MindParams(threshold=0.8), ["Ana Corvel"]),
    ("cot+confidence", "2, 3", MindParams(), ["Lake Ammer", "Drusk"]),  # CoT first, then ranked
    ("cot+confidence", "2, 3", MindParams(threshold=0.5), ["Lake Ammer"]),
])
def test_filters(name, reply, params, expected):
    lm = ScriptedLM(reply)
    mind = MindRAG(lm, search=None, entity_filter=name, params=params, top_entities=2)
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

        from models.lm import Generation, TokenSignals

        self.calls += 1
        self.prompts.extend(prompts)
        pieces = ["Drusk", " is", " a", " village"]
        signals = TokenSignals(pieces, torch.full((4,), 0.1), torch.full((4,), 0.1))
        return [Generation("Drusk is a village", 1, 4, [1, 2, 3, 4], signals)]


def test_the_loop_stops_when_a_sentence_repeats_then_completes_the_answer():
    lm = LoopingLM()
    run = MindRAG(lm, None, trigger="never", max_sentences=6).run(Question("q", "Where?"))
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
    run = MindRAG(LoopingLM(), None, trigger=trigger, params=params, fixed_threshold=0.05, max_sentences=1).run(
        Question("q", "Where?"))
    first = run.trace[0]
    assert first["threshold"] == pytest.approx(threshold) and first["max_score"] == pytest.approx(0.01)
    assert first["word"] == "Drusk" and not first["retrieve"] and run.retrieval_calls == 0


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="trigger must be one of never, always, fixed, dynamic"):
        MindRAG(None, None, trigger="sometimes")
    with pytest.raises(ValueError, match="entity_filter must be one of none, cot, confidence, cot\\+confidence"):
        MindRAG(None, None, entity_filter="cot+none")
