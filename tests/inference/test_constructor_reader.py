"""The Constructor's prompt and output reading, and the reader's prompt, answer cleaning and wrapping."""

import pytest

from core.text import token_f1
from core.types import Passage, Question, Triple
from inference.constructor import Constructor, build_prompt, match_candidate, read_output
from inference.methods import Prediction
from inference.reader import INSTRUCTION, Reader, ReadingMethod, clean_answer

CANDIDATES = [
    Triple.make("Ostrel Brewing", "founded by", "Ana Corvel", "p1"),
    Triple.make("Ana Corvel", "place of birth", "Drusk", "p2"),
    Triple.make("Drusk", "located on", "Lake Ammer", "p3"),
]


def test_prompt_lists_numbered_candidates_question_and_chain():
    messages = build_prompt("Where was the founder of Ostrel Brewing born?", CANDIDATES[:1], CANDIDATES)
    last = messages[-1]["content"]
    assert messages[0]["role"] == "system" and messages[-1]["role"] == "user"
    assert "1. <Ostrel Brewing; founded by; Ana Corvel>" in last and "3. <Drusk; located on; Lake Ammer>" in last
    assert "Question: Where was the founder of Ostrel Brewing born?" in last
    assert last.endswith("Reasoning chain so far: <Ostrel Brewing; founded by; Ana Corvel>")
    assert build_prompt("q", [], CANDIDATES)[-1]["content"].endswith("Reasoning chain so far: (empty)")


def test_first_new_triple_is_matched_by_normalised_text():
    output = "<ostrel brewing;  Founded by; ana corvel>\n< Ana Corvel ; place of birth ; Drusk >\nSo the answer is: Drusk."
    made = read_output(output, chain=[CANDIDATES[0]], candidates=CANDIDATES[1:])  # the loop never offers the chain
    assert made.triple == CANDIDATES[1] and made.answered  # the chain's own triple is passed over


def test_a_restated_chain_triple_is_not_taken_for_a_near_miss():
    chain = [Triple.make("Ana Corvel", "place of birth", "Drusk", "p2")]
    near = Triple.make("Ana Corvel", "place of death", "Drusk", "p4")  # token F1 0.8 with the chain's triple
    made = read_output("<Ana Corvel; place of birth; Drusk>\n<Drusk; located on; Lake Ammer>", chain,
                       candidates=[near, CANDIDATES[2]])
    assert made.triple == CANDIDATES[2]


def test_token_f1_fallback_and_unmatched_output():
    assert match_candidate(("Ana Corvel", "born in", "Drusk"), CANDIDATES) == CANDIDATES[1]
    assert match_candidate(("Mount Fell", "height", "2,000 m"), CANDIDATES) is None
    made = read_output("<Mount Fell; height; 2,000 m>\nnothing else", chain=[], candidates=CANDIDATES)
    assert made.triple is None and not made.answered
    assert read_output("So THE ANSWER IS: Drusk", [], CANDIDATES).answered


def test_constructor_calls_the_lm_once_per_batch(tiny_lm):
    calls = []
    chat = tiny_lm.chat
    tiny_lm.chat = lambda conversations, **kw: calls.append(len(conversations)) or chat(conversations, **kw)
    made = Constructor(tiny_lm, max_new_tokens=8)([("q1", [], CANDIDATES), ("q2", CANDIDATES[:1], CANDIDATES)])
    assert calls == [2] and len(made) == 2  # a random model's output names no candidate, and never raises


@pytest.mark.parametrize("raw, clean", [
    ("Drusk", "Drusk"),
    ("  \nAnswer: Drusk.\nmore", "Drusk"),
    ("So the answer is: \"Lake Ammer\"", "Lake Ammer"),
    ("The answer is 1903.", "1903"),
    ("", ""),
])
def test_clean_answer(raw, clean):
    assert clean_answer(raw) == clean


class Fixed:
    answers = False

    def predict(self, questions):
        return [Prediction(q.id, [("p2", 1.0), ("p1", 0.5), ("p3", 0.2), ("p4", 0.1)], retrieval_calls=2)
                for q in questions]


def test_reading_method_answers_from_the_top_k_passages(tiny_lm):
    passages = {f"p{i}": Passage(f"p{i}", f"Title {i}", f"text {i}") for i in range(1, 5)}
    seen = []
    chat = tiny_lm.chat
    tiny_lm.chat = lambda conversations, **kw: seen.extend(conversations) or chat(conversations, **kw)
    method = ReadingMethod(Fixed(), Reader(tiny_lm, top_k=3, max_new_tokens=6), passages)
    predictions = method.predict([Question("q1", "Where?"), Question("q2", "When?")])
    assert all(isinstance(p.answer, str) for p in predictions)
    assert all(p.llm_calls == 1 and p.retrieval_calls == 2 for p in predictions)
    user = seen[0][-1]["content"]
    assert user.startswith(INSTRUCTION)
    assert "1. title: Title 2, text: text 2\n2. title: Title 1, text: text 1\n3. title: Title 3" in user
    assert "Title 4" not in user and user.endswith("Question: Where?")


def test_token_f1_threshold_is_one_half():
    lake = CANDIDATES[2]  # "Drusk located on Lake Ammer": 5 tokens
    # "drusk located beside mount fell": 5 tokens, 2 shared (drusk, located): F1 = 2·2/(5+5) = 0.4
    below = ("Drusk", "located beside", "Mount Fell")
    # "drusk is located on mount fell range": 7 tokens, 3 shared (drusk, located, on): F1 = 2·3/(7+5) = 0.5
    at = ("Drusk", "is located on", "Mount Fell range")
    assert token_f1(" ".join(below), lake.plain_text) == 0.4 and token_f1(" ".join(at), lake.plain_text) == 0.5
    # the other candidates share at most "drusk" with either: F1 of 2/11 or 2/13 at most
    assert match_candidate(below, CANDIDATES) is None
    assert match_candidate(at, CANDIDATES) == lake
    assert read_output(f"<{'; '.join(below)}>", [], CANDIDATES).triple is None
    assert read_output(f"<{'; '.join(at)}>", [], CANDIDATES).triple == lake
