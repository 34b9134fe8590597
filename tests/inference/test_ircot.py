"""IRCoT's loop with a scripted LM and a stub retriever: its stop, its queries, L, the budget, the batching,
the reading context and the ranking."""

import re
from collections import Counter

import pytest

from core.types import Passage, Question
from inference.ircot import DEMOS, IRCoT, IRCoTSettings, build_prompt, first_sentence

PASSAGES = {f"p{i}": Passage(f"p{i}", f"Title p{i}", f"Text of p{i}.") for i in range(1, 10)}
Q1 = Question("q1", "Where was the founder of Orvell Mills born?")
Q2 = Question("q2", "Who is older, Ana or Bo?")
HITS = {Q1.question: ["p1", "p2"], Q2.question: ["p3", "p4"],
        "Orvell Mills was founded by Ana Corvel.": ["p2", "p5"],
        "Ana was born in 1950.": ["p6", "p7"], "Bo was born in 1960.": ["p7", "p8"]}


class StubRetriever:
    """Hits by query (`HITS`, else p9), scored 1/(rank+1); records each batch of queries and its k."""

    def __init__(self, hits=HITS):
        self.hits, self.searches = hits, []

    def search(self, queries, k):
        self.searches.append((list(queries), k))
        return [[(pid, 1 / (rank + 1)) for rank, pid in enumerate(self.hits.get(q, ["p9"])[:k])] for q in queries]


class ScriptedLM:
    """Replies to a question's i-th step with `script[question][i]`; records every chat call."""

    def __init__(self, script):
        self.script, self.asked, self.calls = script, Counter(), []

    def chat(self, conversations, **kwargs):
        self.calls.append((conversations, kwargs))
        replies = []
        for messages in conversations:
            question = re.search(r"^Question: (.*)$", messages[-1]["content"], re.MULTILINE).group(1)
            replies.append(type("G", (), {"text": self.script[question][self.asked[question]]})())
            self.asked[question] += 1
        return replies

    def user_messages(self, question):
        return [m[-1]["content"] for conversations, _ in self.calls for m in conversations
                if f"Question: {question.question}\n" in m[-1]["content"]]


def ircot(lm, retriever=None, **settings):
    return IRCoT(retriever or StubRetriever(), lm, PASSAGES, IRCoTSettings(k=2, **settings))


def test_stops_at_the_answer_queries_with_its_sentence_and_batches_the_questions():
    lm = ScriptedLM({Q1.question: ["Orvell Mills was founded by Ana Corvel. She wrote books.\nmore",
                                   "Ana Corvel was born in Drusk, so the answer is Drusk."],
                     Q2.question: ["Ana was born in 1950.", "Bo was born in 1960.", "Ana was born in 1950."]})
    retriever = StubRetriever()
    first, second = ircot(lm, retriever, max_steps=5).predict([Q1, Q2])
    # searches: both questions, then both first sentences (the first sentence only), then Q2's second
    assert retriever.searches == [([Q1.question, Q2.question], 2),
                                  (["Orvell Mills was founded by Ana Corvel.", "Ana was born in 1950."], 2),
                                  (["Bo was born in 1960."], 2)]
    assert [len(conversations) for conversations, _ in lm.calls] == [2, 2, 1]  # the running questions, together
    assert all(kwargs["stop"] == ["\n"] for _, kwargs in lm.calls)
    assert (first.llm_calls, first.retrieval_calls, first.retrieved) == (2, 2, ["p1", "p2", "p5"])
    assert first.trace[-1] == {"step": 2, "sentence": "Ana Corvel was born in Drusk, so the answer is Drusk.",
                               "stop": "answered", "answer": "Drusk"}
    assert first.answer is None  # the reader answers, as for every method
    assert (second.llm_calls, second.retrieval_calls) == (3, 3) and second.trace[-1]["stop"] == "repeated"
    # ranking: by rank in the search that first found a passage, the earlier search first on equal ranks
    assert [pid for pid, _ in second.passages] == ["p3", "p6", "p4", "p7", "p8"]
    assert second.passages[1] == ("p6", 1.0) and [pid for pid, _ in first.passages] == ["p1", "p2", "p5"]
    # the LM reads the passages collected so far and the reasoning so far
    step2 = lm.user_messages(Q1)[1]
    assert re.findall(r"title: (Title p\d)", step2) == ["Title p1", "Title p2", "Title p5"]
    assert step2.endswith("Reasoning so far: Orvell Mills was founded by Ana Corvel.")
    assert lm.user_messages(Q1)[0].endswith("Reasoning so far: (empty)")


def test_at_most_l_sentences_and_an_empty_one_stops():
    lm = ScriptedLM({Q1.question: [f"Fact number {i}." for i in range(10)], Q2.question: ["  \n", "unused."]})
    first, second = ircot(lm, max_steps=3).predict([Q1, Q2])
    assert (first.llm_calls, first.retrieval_calls) == (3, 4)  # a search after each sentence, the last one's too
    assert [step.get("query") for step in first.trace] == [Q1.question, "Fact number 0.", "Fact number 1.",
                                                           "Fact number 2."]
    assert (second.llm_calls, second.retrieval_calls, second.trace[-1]["stop"]) == (1, 1, "empty")


def test_the_budget_caps_the_passages_and_stops_the_searches():
    hits = {Q1.question: ["p1", "p2"], "One.": ["p2", "p3", "p4"], "Two.": ["p5"]}
    lm = ScriptedLM({Q1.question: ["One.", "Two.", "Three."]})
    retriever = StubRetriever(hits)
    (prediction,) = IRCoT(retriever, lm, PASSAGES, IRCoTSettings(k=3, max_steps=3, budget=3)).predict([Q1])
    assert prediction.retrieved == ["p1", "p2", "p3"]  # p4, beyond the budget, is dropped
    assert prediction.trace[1]["kept"] == ["p3"] and prediction.trace[1]["retrieved"] == ["p2", "p3", "p4"]
    assert prediction.retrieval_calls == 2 and prediction.llm_calls == 3  # no search once the budget is full
    assert [queries for queries, _ in retriever.searches] == [[Q1.question], ["One."]]


def test_the_lm_reads_the_most_recent_passages_up_to_the_cap():
    hits = {Q1.question: ["p1", "p2"], "One.": ["p3", "p4"]}
    lm = ScriptedLM({Q1.question: ["One.", "Two."]})
    ircot(lm, StubRetriever(hits), max_steps=2, max_context=3).predict([Q1])
    assert re.findall(r"title: (Title p\d)", lm.user_messages(Q1)[1]) == ["Title p2", "Title p3", "Title p4"]


def test_first_sentence_and_the_demonstrations():
    assert first_sentence("\n The U.S. Army met J. Smith in 1990. Then more.\nnext") == "The U.S. Army met J. Smith in 1990."
    assert first_sentence("no period") == "no period" and first_sentence(" \n") == ""
    prompt = build_prompt(Q1.question, [PASSAGES["p1"]], ["A fact."])
    assert prompt[0]["role"] == "system" and len(prompt) == 2 + 2 * len(DEMOS)
    assert "the answer is" in prompt[-2]["content"]  # the last demonstration answers
    assert prompt[-1]["content"].endswith(f"Question: {Q1.question}\nReasoning so far: A fact.")


def test_bad_settings_are_refused():
    for settings in ({"budget": 0}, {"max_steps": 0}, {"k": 0}, {"max_context": 0}):
        with pytest.raises(ValueError):
            IRCoTSettings(**settings)
    with pytest.raises(ValueError):
        IRCoT(StubRetriever(), ScriptedLM({}), PASSAGES, k=0)
