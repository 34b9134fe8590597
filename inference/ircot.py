"""`ircot`: retrieval interleaved with chain-of-thought (IRCoT, Trivedi et al. 2023), batched over questions.

1. Retrieve `k` passages with the question.
2. Up to L (`max_steps`) times, for every question still running: the LM reads the question, the
   passages collected so far (the `max_context` most recently collected, as IRCoT caps its reading
   context) and the reasoning so far, and writes the next chain-of-thought sentence (the first
   sentence of its first line; the prompt and its few-shot demonstrations are written for this
   project). The LM calls of all running questions go to `LanguageModel.chat` as one batch.
3. A sentence saying "the answer is" ends the question (its answer is kept in the trace only: the
   EM/F1 answer comes from the reader, as for every method). So does an empty or repeated sentence.
   Otherwise the sentence alone is the next query: `k` more passages, the new ones collected.

Budget: at most `budget` distinct passages are collected (the prediction's `retrieved` pool); of a
search that would pass it, the best new passages fill the budget and the rest are dropped, never
read or ranked. Once the budget is full no more searches are made, and the reasoning goes on over
the passages collected.

Ranking: a passage ranks by its rank in the search that first found it, equal ranks going to the
earlier search: the question's best passage, then the best new passage of each sentence's search,
then the second ones... Scores of different queries are not comparable (BM25's grow with the
query's length), while the best of each search is what that search was for; so the reader's top
passages cover every hop the reasoning searched for, not only the question's own search. A
passage's score is its retriever score in that search.

Counts: `llm_calls` is the sentences generated (the reader adds its own call); `retrieval_calls`
the searches made, the question's included.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from core.config import require_positive
from core.types import Passage, Question
from inference.constructor import ANSWER_MARK
from inference.methods import Method, PassagePool, Prediction
from inference.mind import final_answer
from inference.reader import numbered_passages
from inference.retrievers import Retriever
from models.lm.chat import Message, chat_messages
from models.lm.interface import LanguageModel

INSTRUCTION = ("You answer a question by reasoning over the given passages, one sentence at a time. Write only the "
               "next sentence of the reasoning: one fact from the passages that brings the answer closer. Once the "
               "reasoning answers the question, end that sentence with: so the answer is <answer>.")

# Demonstrations written for this project (invented places): a first step, an answering step, a comparison.
_ABBEY = ("Wenlow Abbey", "Wenlow Abbey is a ruined Cistercian monastery beside the village of Brisk, founded in 1137.")
_BRISK = ("Brisk", "Brisk is a village in the county of Harrowmoor, on the river Oll.")
_HOLLOW = ("Tarn Hollow", "Tarn Hollow is a valley in the Oster Hills known for its slate quarries.")
_LIBRARY = ("Pellam Library", "The Pellam Library opened to readers in 1874 in the town of Ardsey.")
_OBSERVATORY = ("Qirra Observatory", "The Qirra Observatory was built on Mount Qirra and opened in 1869.")
_ABBEY_QUESTION = "Which county is the village beside Wenlow Abbey in?"
DEMOS = [
    (_ABBEY_QUESTION, [_ABBEY, _HOLLOW], [], "Wenlow Abbey stands beside the village of Brisk."),
    (_ABBEY_QUESTION, [_ABBEY, _HOLLOW, _BRISK], ["Wenlow Abbey stands beside the village of Brisk."],
     "Brisk is in the county of Harrowmoor, so the answer is Harrowmoor."),
    ("Which opened first, the Pellam Library or the Qirra Observatory?", [_LIBRARY, _OBSERVATORY],
     ["The Pellam Library opened in 1874."],
     "The Qirra Observatory opened in 1869, before 1874, so the answer is the Qirra Observatory."),
]


def user_message(question: str, passages: list[tuple[str, str]], reasoning: list[str]) -> str:
    return (f"Passages:\n{numbered_passages(passages)}\n\nQuestion: {question}\n"
            f"Reasoning so far: {' '.join(reasoning) if reasoning else '(empty)'}")


DEMO_PAIRS = [(user_message(question, passages, reasoning), sentence) for question, passages, reasoning, sentence in DEMOS]


def build_prompt(question: str, passages: list[Passage], reasoning: list[str]) -> list[Message]:
    return chat_messages(user_message(question, [(p.title, p.text) for p in passages], reasoning),
                         system=INSTRUCTION, demos=DEMO_PAIRS)


# A sentence ends at . ! or ? before a space, unless one capital letter precedes it (U.S. Army, J. Smith).
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\b[A-Z]\.)\s")


def first_sentence(text: str) -> str:
    """The first sentence of the first non-empty line of `text`."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return _SENTENCE_END.split(line, maxsplit=1)[0].strip()


@dataclass
class _Run:
    """The state of one question in the loop."""

    question: Question
    pool: PassagePool
    found: dict[str, tuple[int, int]] = field(default_factory=dict)  # passage id -> (rank, search) that found it
    sentences: list[str] = field(default_factory=list)
    trace: list[dict] = field(default_factory=list)
    retrieval_calls: int = 0
    llm_calls: int = 0
    done: bool = False

    def collect(self, hits: list[tuple[str, float]]) -> list[str]:
        """Keep the new passages of a search, within the budget; the ones kept."""
        kept = []
        for rank, (pid, score) in enumerate(hits):
            if self.pool.add(pid, score):
                self.found[pid] = (rank, self.retrieval_calls)
                kept.append(pid)
        self.retrieval_calls += 1
        return kept

    def ranking(self, k: int) -> list[tuple[str, float]]:
        return [(pid, self.pool.scores[pid]) for pid in sorted(self.found, key=self.found.__getitem__)[:k]]


@dataclass
class IRCoTSettings:
    """IRCoT's loop: searches, steps, reading context and budget (its answer for EM/F1 comes from the reader)."""

    k: int = 4
    """passages retrieved per search (the question's, then each sentence's)"""
    max_steps: int = 5
    """L: the most sentences of reasoning per question"""
    max_context: int = 15
    """the most passages the LM reads at a step (the most recently collected)"""
    max_new_tokens: int = 64
    """the longest generation for one sentence"""
    budget: int | None = None
    """the most distinct passages collected (the `retrieved` pool); null: no cap"""

    def __post_init__(self) -> None:
        require_positive(self, "k", "max_steps", "max_context", "max_new_tokens", "budget")


class IRCoT(Method):
    """IRCoT over `retriever` and `lm` with `settings`, keeping the top `k` passages; see the module docstring."""

    def __init__(self, retriever: Retriever, lm: LanguageModel, passages: dict[str, Passage],
                 settings: IRCoTSettings | None = None, k: int = 10, batch_size: int = 8) -> None:
        if min(k, batch_size) < 1:
            raise ValueError(f"k and batch_size must be at least 1, got k={k}, batch_size={batch_size}")
        self.retriever, self.lm, self.passages = retriever, lm, passages
        self.settings, self.k, self.batch_size = settings or IRCoTSettings(), k, batch_size

    def predict(self, questions: list[Question]) -> list[Prediction]:
        start = time.perf_counter()
        runs = [_Run(q, PassagePool(self.settings.budget)) for q in questions]
        for run in runs:
            run.trace.append({"step": 0})
        self._retrieve(runs, [q.question for q in questions])
        for step in range(1, self.settings.max_steps + 1):
            active = [r for r in runs if not r.done]
            if not active:
                break
            searching = [run for run in self._reason(active, step) if not run.pool.full]
            self._retrieve(searching, [run.sentences[-1] for run in searching])
        seconds = (time.perf_counter() - start) / max(len(questions), 1)
        return [Prediction(r.question.id, r.ranking(self.k), retrieval_calls=r.retrieval_calls, llm_calls=r.llm_calls,
                           seconds=seconds, trace=r.trace, retrieved=r.pool.ids()) for r in runs]

    def _reason(self, runs: list[_Run], step: int) -> list[_Run]:
        """One sentence for each run, in one batch of LM calls; the runs that go on searching."""
        recent = self.settings.max_context
        prompts = [build_prompt(r.question.question, [self.passages[pid] for pid in r.pool.ids()[-recent:]],
                                r.sentences) for r in runs]
        outputs = self.lm.chat(prompts, max_new_tokens=self.settings.max_new_tokens, batch_size=self.batch_size,
                               stop=["\n"])
        going_on = []
        for run, output in zip(runs, outputs, strict=True):
            run.llm_calls += 1
            sentence = first_sentence(output.text)
            entry = {"step": step, "sentence": sentence}
            run.trace.append(entry)
            if not sentence or sentence.lower() in (s.lower() for s in run.sentences):
                entry["stop"], run.done = "empty" if not sentence else "repeated", True
                continue
            run.sentences.append(sentence)
            if ANSWER_MARK in sentence.lower():
                entry["stop"], entry["answer"], run.done = "answered", final_answer(sentence), True
                continue
            going_on.append(run)
        return going_on

    def _retrieve(self, runs: list[_Run], queries: list[str]) -> None:
        """One search per run (one batch), its new passages collected; recorded in the run's last trace entry."""
        if not runs:
            return
        for run, query, hits in zip(runs, queries, self.retriever.search(queries, self.settings.k), strict=True):
            kept = run.collect(hits)
            run.trace[-1].update(query=query, retrieved=[pid for pid, _ in hits], kept=kept)
