"""The reader: an LLM answers from the top-k passages of any retrieval method (KiRAG's appendix A.3 prompt)."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

from core.types import Passage, Question
from inference.methods import Method, Prediction
from models.chat import Message, chat_messages
from models.lm import LanguageModel

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


class Reader:
    """Answers questions from passages with a chat LM, greedy, in batches."""

    def __init__(self, lm: LanguageModel, top_k: int = 3, max_new_tokens: int = 32, batch_size: int = 8) -> None:
        self.lm, self.top_k, self.max_new_tokens, self.batch_size = lm, top_k, max_new_tokens, batch_size

    def answer(self, questions: Sequence[Question], contexts: Sequence[Sequence[Passage]]) -> list[str]:
        prompts = [build_prompt(q.question, list(c)[: self.top_k]) for q, c in zip(questions, contexts, strict=True)]
        outputs = self.lm.chat(prompts, max_new_tokens=self.max_new_tokens, batch_size=self.batch_size, stop=["\n"])
        return [clean_answer(o.text) for o in outputs]


class ReadingMethod(Method):
    """Any retrieval method followed by the reader over its top passages: adds answers and one LLM call."""

    answers = True

    def __init__(self, method: Method, reader: Reader, passages: dict[str, Passage]) -> None:
        self.method, self.reader, self.passages = method, reader, passages

    def predict(self, questions: list[Question]) -> list[Prediction]:
        predictions = self.method.predict(questions)
        start = time.perf_counter()
        contexts = [[self.passages[pid] for pid, _ in p.passages] for p in predictions]
        answers = self.reader.answer(questions, contexts)
        seconds = (time.perf_counter() - start) / max(len(questions), 1)
        for prediction, answer in zip(predictions, answers, strict=True):
            prediction.answer = answer
            prediction.llm_calls += 1
            prediction.seconds += seconds
        return predictions
