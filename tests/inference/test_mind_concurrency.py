"""MIND run concurrently (`concurrency` > 1, over `models.lm.batching.BatchedCalls`) predicts what it
predicts one question at a time, in fewer LM calls, with one thread at the LM and at the search."""

import threading
import time

import pytest
import torch

from core.types import Question
from inference.mind import ENTITY_INSTRUCTION, Found, MindRAG, MindSettings
from models.lm.interface import Generation, TokenSignals


class ScriptLM:
    """MIND's LM in miniature: each reply depends on its prompt alone. Two reasoning sentences about the
    question's last word, then the answer; the entity prompt names that word."""

    def __init__(self):
        self.calls, self._busy = [], threading.Lock()

    def format_chat(self, messages):
        return "\n".join(m["content"] for m in messages)

    def chat(self, conversations, **settings):
        return self.generate([self.format_chat(c) for c in conversations], **settings)

    def generate(self, prompts, **settings):
        assert self._busy.acquire(blocking=False), "the LM was called from two threads at once"
        try:
            time.sleep(0.005)
            self.calls.append(len(prompts))
            return [self.reply(p, settings.get("return_signals", False)) for p in prompts]
        finally:
            self._busy.release()

    @staticmethod
    def reply(prompt, signals):
        tag = prompt.split("Question: ")[-1].split("?")[0].split()[-1]
        if ENTITY_INSTRUCTION in prompt:
            text = f"Entity {tag}"
        else:
            steps = prompt.count("Step ")
            text = f"So the answer is {tag}" if steps >= 2 else f"Step {steps} on {tag} with {prompt.count('Fact')}"
        pieces = [text[:3], text[3:]]
        flat = torch.full((2,), 0.5)
        return Generation(text, 1, 2, [1, 2], TokenSignals(pieces, flat, flat, flat) if signals else None)


class TagSearch:
    def __init__(self):
        self.concurrent, self._busy = 0, threading.Lock()

    def search_with_facts(self, query, k):
        if not self._busy.acquire(blocking=False):
            self.concurrent += 1
            self._busy.acquire()
        try:
            time.sleep(0.002)
            return Found([(f"p:{query}", 1.0)], [(f"Fact for {query}", f"p:{query}")], [f"p:{query}"])
        finally:
            self._busy.release()


def test_mind_run_concurrently_predicts_what_it_predicts_one_question_at_a_time():
    questions = [Question(f"q{i}", f"Where is place{i}?") for i in range(5)]
    runs = {}
    for concurrency in (1, 3):
        lm, search = ScriptLM(), TagSearch()
        settings = MindSettings(entity_filter="none", concurrency=concurrency)
        mind = MindRAG(lm, search, trigger="always", settings=settings)
        assert mind.batched == (concurrency > 1)
        runs[concurrency] = (mind.predict(questions), lm.calls, search.concurrent)
    (alone, alone_calls, _), (together, together_calls, searches_at_once) = runs[1], runs[3]
    strip = [(p.question_id, p.passages, p.answer, p.trace, p.retrieval_calls, p.llm_calls) for p in alone]
    assert [(p.question_id, p.passages, p.answer, p.trace, p.retrieval_calls, p.llm_calls) for p in together] == strip
    assert alone[0].answer == "place0" and alone[0].retrieval_calls == 2
    assert sum(alone_calls) == sum(together_calls) == len(alone_calls)  # the same prompts, one per call alone
    assert max(together_calls) == 3 and len(together_calls) < len(alone_calls) / 2
    assert searches_at_once == 0  # searches never overlap (a KiRAG search may call its own LM)


def test_concurrency_below_one_is_refused():
    with pytest.raises(ValueError, match="concurrency must be at least 1"):
        MindSettings(concurrency=0)
