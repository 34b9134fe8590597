"""The reader: an LLM answers from the top-k passages of any retrieval method (KiRAG's appendix A.3 prompt).

A prompt that would not fit the LM's context with the answer's tokens has its longest passages cut
(their ends), all to about one length, until it fits; the prediction counts the passages cut
(`truncated_passages`). Only a prompt that cannot fit without any passage text is an error.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from core.config import require_positive
from core.types import Passage, Question
from inference.methods import Method, Prediction
from models.lm.chat import Message, chat_messages
from models.lm.interface import LanguageModel

INSTRUCTION = "Given some context and a question, please only output the answer to the question."

# One demonstration, written for this project, shows the short-span answer format.
DEMO_CONTEXT = [("Harlow Bridge", "Harlow Bridge is a stone arch bridge over the river Tesk, completed in 1764.")]
DEMO_QUESTION = "Which river does Harlow Bridge cross?"
DEMO_ANSWER = "the river Tesk"

_PREFIX = re.compile(r"^(so\s+)?(the\s+)?(final\s+)?answer(\s+is)?\s*[:\-]?\s*", re.IGNORECASE)


def numbered_passages(passages: Sequence[tuple[str, str]]) -> str:
    """(title, text) pairs as the lines `1. title: ..., text: ...`."""
    return "\n".join(f"{i}. title: {title}, text: {text}" for i, (title, text) in enumerate(passages, start=1))


def user_message(question: str, passages: Sequence[tuple[str, str]]) -> str:
    return f"{INSTRUCTION}\n\nContext:\n{numbered_passages(passages)}\n\nQuestion: {question}"


def build_prompt(question: str, passages: Sequence[Passage]) -> list[Message]:
    return chat_messages(user_message(question, [(p.title, p.text) for p in passages]),
                         demos=[(user_message(DEMO_QUESTION, DEMO_CONTEXT), DEMO_ANSWER)])


def clean_answer(text: str) -> str:
    """A short span: the first non-empty line, without an "Answer:"-style prefix, quotes or a final period."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    line = _PREFIX.sub("", line).strip()
    line = line.strip("\"'`*").strip()
    return line[:-1].strip() if line.endswith(".") else line


def water_level(lengths: Sequence[int], budget: int) -> int:
    """The largest cap c with sum(min(length, c)) <= budget: cutting every length to c spends the budget
    on the longest ones first, and keeps whole those below it."""
    remaining, ordered = budget, sorted(lengths)
    for i, length in enumerate(ordered):
        share = remaining // (len(ordered) - i)
        if length > share:
            return share
        remaining -= length
    return ordered[-1] if ordered else 0


@dataclass
class ReaderSettings:
    """The reader: how many passages it reads, how long its answer, how many questions at once."""

    top_k: int = 3
    """passages the reader sees"""
    max_new_tokens: int = 32
    """the longest answer"""
    batch_size: int = 8
    """questions answered together"""

    def __post_init__(self) -> None:
        require_positive(self, "top_k", "max_new_tokens", "batch_size")


class Reader:
    """Answers questions from passages with a chat LM and `settings`, greedy, in batches."""

    def __init__(self, lm: LanguageModel, settings: ReaderSettings | None = None) -> None:
        self.lm, self.settings = lm, settings or ReaderSettings()

    def answer(self, questions: Sequence[Question],
               contexts: Sequence[Sequence[Passage]]) -> tuple[list[str], list[int]]:
        """The answers, and for each question how many of its passages were cut to fit the context."""
        top_k = self.settings.top_k
        fitted = [self.fit(q.question, list(c)[:top_k]) for q, c in zip(questions, contexts, strict=True)]
        prompts = [build_prompt(q.question, passages) for q, (passages, _) in zip(questions, fitted)]
        outputs = self.lm.chat(prompts, max_new_tokens=self.settings.max_new_tokens,
                               batch_size=self.settings.batch_size, stop=["\n"])
        return [clean_answer(o.text) for o in outputs], [cut for _, cut in fitted]

    def _tokens(self, question: str, passages: Sequence[Passage]) -> int:
        return len(self.lm.encode(self.lm.format_chat(build_prompt(question, passages))))

    def fit(self, question: str, passages: list[Passage]) -> tuple[list[Passage], int]:
        """`passages`, the longest cut (at their ends) so that the prompt and the answer's tokens fit the
        LM's context, and how many were cut; a `ValueError` when even no passage text would fit."""
        context = self.lm.context_length
        if context is None:
            return passages, 0
        answer = self.settings.max_new_tokens
        limit = context - answer
        excess = self._tokens(question, passages) - limit
        if excess <= 0:
            return passages, 0
        bare = self._tokens(question, [replace(p, text="") for p in passages])
        if bare > limit:
            raise ValueError(f"the reader's prompt takes {bare} tokens without its passages' texts, and the answer up "
                             f"to {answer}: more than the LM's context of {context} tokens; raise "
                             "lm.n_ctx, or lower reader.max_new_tokens or reader.top_k")
        lengths = [len(self.lm.encode(p.text)) for p in passages]
        budget = sum(lengths) - excess
        while True:  # token counts of parts do not add up exactly: shrink until the whole prompt fits
            cap = water_level(lengths, max(budget, 0))
            cut = [replace(p, text=p.text[: len(p.text) * cap // n].rstrip()) if n > cap else p
                   for p, n in zip(passages, lengths)]
            excess = self._tokens(question, cut) - limit
            if excess <= 0 or budget <= 0:
                return cut, sum(n > cap for n in lengths)
            budget -= max(excess, budget // 8)


class ReadingMethod(Method):
    """Any retrieval method followed by the reader over its top passages: adds answers and one LLM call."""

    answers = True

    def __init__(self, method: Method, reader: Reader, passages: dict[str, Passage]) -> None:
        self.method, self.reader, self.passages = method, reader, passages

    @property
    def batched(self) -> bool:
        """As the method it reads for: an unbatched one's questions (MIND's) are still saved one at a time."""
        return self.method.batched

    def predict(self, questions: list[Question]) -> list[Prediction]:
        predictions = self.method.predict(questions)
        start = time.perf_counter()
        contexts = [[self.passages[pid] for pid, _ in p.passages] for p in predictions]
        answers, cuts = self.reader.answer(questions, contexts)
        seconds = (time.perf_counter() - start) / max(len(questions), 1)
        for prediction, answer, cut in zip(predictions, answers, cuts, strict=True):
            prediction.answer = answer
            prediction.truncated_passages = cut
            prediction.llm_calls += 1
            prediction.seconds += seconds
        return predictions
