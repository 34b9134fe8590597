"""The Constructor's prompt and output reading, and the reader's prompt, answer cleaning and wrapping."""

import pytest

from core.text import token_f1
from core.types import Passage, Question, Triple
from inference.constructor import Constructor, build_prompt, match_candidate, read_output
from inference.methods import Prediction
from inference.reader import INSTRUCTION, Reader, ReaderSettings, ReadingMethod, clean_answer, water_level
from kg.triple_parser import parse_triples

CANDIDATES = [
    Triple.make("Ostrel Brewing", "founded by", "Ana Corvel", "p1"),
    Triple.make("Ana Corvel", "place of birth", "Drusk", "p2"),
    Triple.make("Drusk", "located on", "Lake Ammer", "p3"),
]


def test_prompt_asks_for_the_next_triple_only():
    messages = build_prompt("q", [], CANDIDATES)
    demos = [m["content"] for m in messages if m["role"] == "assistant"]
    assert "next triple" in messages[0]["content"]
    # the demonstrations answer with one triple, a triple and the answer, or the answer alone
    assert [len(parse_triples(d)[0]) for d in demos] == [1, 1, 0]
    assert ["answer is" in d for d in demos] == [False, True, True]


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
    assert made.triple == CANDIDATES[1] and made.answer == "Drusk"  # the chain's own triple is passed over
    assert made.complete  # its tail is the answer


def test_a_restated_chain_triple_is_not_taken_for_a_near_miss():
    chain = [Triple.make("Ana Corvel", "place of birth", "Drusk", "p2")]
    near = Triple.make("Ana Corvel", "place of death", "Drusk", "p4")  # token F1 0.8 with the chain's triple
    made = read_output("<Ana Corvel; place of birth; Drusk>\n<Drusk; located on; Lake Ammer>", chain,
                       candidates=[near, CANDIDATES[2]])
    assert made.triple == CANDIDATES[2]


def test_a_near_copy_matches_only_about_the_same_head_entity():
    # token F1 2·6/(8+6) = 0.86 with "<Ana Corvel; place of birth; Drusk>", same head: a near copy
    assert match_candidate(("Ana Corvel", "place of birth", "the town of Drusk"), CANDIDATES) == CANDIDATES[1]
    assert match_candidate(("Ana Corvel", "born in", "Drusk"), CANDIDATES) is None  # F1 6/11 < 0.8
    # an invented fact about another entity (F1 2·5/(6+6) = 0.83) is never mapped onto the candidate
    assert match_candidate(("Lise Corvel", "place of birth", "Drusk"), CANDIDATES) is None
    assert match_candidate(("Mount Fell", "height", "2,000 m"), CANDIDATES) is None


@pytest.mark.parametrize("output, triple, answer, complete", [
    ("<Ana Corvel; place of birth; Drusk>\nSo the answer is: Drusk.", 1, "Drusk", True),  # the tail answers
    ("<Ana Corvel; place of birth; Drusk>\nSo the answer is: Lake Ammer.", 1, "Lake Ammer", False),
    ("<Ana Corvel; place of birth; Drusk>", 1, None, False),
    ("So THE ANSWER IS: Drusk", None, "Drusk", True),  # the chain so far answers
    ("<Mount Fell; height; 2,000 m>\nSo the answer is: Drusk.", None, "Drusk", False),  # an unmatched proposal
    ("<Mount Fell; height; 2,000 m>\nnothing else", None, None, False),
])
def test_output_reading_and_completion(output, triple, answer, complete):
    made = read_output(output, chain=[CANDIDATES[0]], candidates=CANDIDATES[1:])
    assert made.triple == (CANDIDATES[triple] if triple is not None else None)
    assert made.answer == answer and made.complete == complete


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
    (".NET Framework.", ".NET Framework"),  # only a final period goes
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
    method = ReadingMethod(Fixed(), Reader(tiny_lm, ReaderSettings(top_k=3, max_new_tokens=6)), passages)
    predictions = method.predict([Question("q1", "Where?"), Question("q2", "When?")])
    assert all(isinstance(p.answer, str) for p in predictions)
    assert all(p.llm_calls == 1 and p.retrieval_calls == 2 for p in predictions)
    user = seen[0][-1]["content"]
    assert user.startswith(INSTRUCTION)
    assert "1. title: Title 2, text: text 2\n2. title: Title 1, text: text 1\n3. title: Title 3" in user
    assert "Title 4" not in user and user.endswith("Question: Where?")


def test_token_f1_threshold_is_four_fifths():
    lake = CANDIDATES[2]  # "Drusk located on Lake Ammer": 5 tokens, the only candidate of head Drusk
    # "drusk located on lake fell shore": 6 tokens, 4 shared: F1 = 2·4/(6+5) = 0.73
    below = ("Drusk", "located on", "Lake Fell shore")
    # "drusk located on lake fell": 5 tokens, 4 shared: F1 = 2·4/(5+5) = 0.8
    at = ("Drusk", "located on", "Lake Fell")
    assert token_f1(" ".join(below), lake.plain_text) == 8 / 11 and token_f1(" ".join(at), lake.plain_text) == 0.8
    assert match_candidate(below, CANDIDATES) is None
    assert match_candidate(at, CANDIDATES) == lake
    assert read_output(f"<{'; '.join(below)}>", [], CANDIDATES).triple is None
    assert read_output(f"<{'; '.join(at)}>", [], CANDIDATES).triple == lake


@pytest.mark.parametrize("lengths, budget, level", [
    ([10, 20, 30], 60, 30),  # everything fits
    ([10, 20, 30], 45, 17),  # 10 whole, the others cut to 17 (10 + 17 + 17 = 44)
    ([100, 5], 20, 15),
    ([7, 7], 0, 0),
    ([5, 100], 11, 6),  # 5 fits its share exactly and stays whole: the other gets the rest, 6
])
def test_water_level_cuts_the_longest_first(lengths, budget, level):
    assert water_level(lengths, budget) == level
    assert sum(min(n, level) for n in lengths) <= budget or level == max(lengths)


def test_the_reader_cuts_the_longest_passage_to_fit_the_context_and_counts_it(tiny_lm):
    """A 100k-character passage among the top 3 no longer stops the run: it is cut (its start kept), the
    short ones stay whole, the prompt and the answer fit, and the prediction says one passage was cut."""
    huge = Passage("p1", "Title 1", "Drusk lies on Lake Ammer. " * 4000)
    passages = {"p1": huge, "p2": Passage("p2", "Title 2", "text 2"), "p3": Passage("p3", "Title 3", "text 3"),
                "p4": Passage("p4", "Title 4", "text 4")}
    seen = []
    chat = tiny_lm.chat
    tiny_lm.chat = lambda conversations, **kw: seen.extend(conversations) or chat(conversations, **kw)
    reader = Reader(tiny_lm, ReaderSettings(top_k=3, max_new_tokens=6))
    predictions = ReadingMethod(Fixed(), reader, passages).predict([Question("q1", "Where is Drusk?")])
    assert [p.truncated_passages for p in predictions] == [1] and isinstance(predictions[0].answer, str)
    prompt = tiny_lm.format_chat(seen[0])
    assert len(tiny_lm.encode(prompt)) + 6 <= tiny_lm.context_length == 2048
    assert "text: text 2\n" in prompt and "text: Drusk lies on Lake Ammer." in prompt and "text 3" in prompt
    fitted, cut = reader.fit("Where is Drusk?", [passages["p2"], passages["p3"]])
    assert (fitted, cut) == ([passages["p2"], passages["p3"]], 0)  # a prompt that fits is left alone


def test_a_reader_prompt_that_cannot_fit_even_without_passages_names_the_settings(tiny_lm):
    tiny_lm.context_length = 40
    reader = Reader(tiny_lm, ReaderSettings(max_new_tokens=6))
    with pytest.raises(ValueError, match=r"the reader's prompt takes \d+ tokens without its passages' texts, and "
                                         r"the answer up to 6: more than the LM's context of 40 tokens; raise lm.n_ctx"):
        reader.answer([Question("q1", "Where?")], [[Passage("p", "T", "text")]])
