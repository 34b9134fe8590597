"""The chat prompt for KiRAG's triple extraction: instruction, demonstrations chosen per passage, passage.

The demonstration pool (`triple_demos.json`) was written for this project: invented or generic
encyclopedic passages, each with its complete set of triples.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.records import DataError, field, read_records
from core.text import normalize_space
from core.types import Passage, triple_text
from kg.triple_parser import Parts
from models.encoder import TextEncoder
from models.lm.chat import Message, chat_messages

DEMOS_PATH = Path(__file__).parent / "triple_demos.json"

INSTRUCTION = (
    "Your task is to extract every knowledge triple stated in a passage. Write each triple on its own "
    "line in the form <head entity; relation; tail entity>. The head and the tail may be the passage's "
    "title or phrases taken from its text. When several tails share the same head and relation, write "
    "one triple whose tail lists them separated by commas. Output only the triples."
)


@dataclass(frozen=True)
class Demo:
    title: str
    text: str
    triples: tuple[Parts, ...]


def user_message(title: str, text: str) -> str:
    return f"Title: {title}\nText: {text}"


def assistant_message(triples: tuple[Parts, ...] | list[Parts]) -> str:
    return "\n".join(triple_text(*t) for t in triples)


def load_demos(path: str | Path = DEMOS_PATH) -> list[Demo]:
    """Read a demonstration pool: a JSON list of {title, text, triples: [[head, relation, tail], ...]}."""
    demos = []
    for where, record in read_records(path):
        triples = field(record, "triples", list, path, where)
        for i, t in enumerate(triples):
            if not (isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) and x.strip() for x in t)):
                raise DataError(path, where, f"field 'triples' item {i} should be 3 non-empty strings")
        demos.append(Demo(
            normalize_space(field(record, "title", str, path, where)),
            normalize_space(field(record, "text", str, path, where)),
            tuple((normalize_space(h), normalize_space(r), normalize_space(t)) for h, r, t in triples),
        ))
    return demos


def prompt_fingerprint(path: str | Path = DEMOS_PATH) -> str:
    """A short hash of the instruction and the demonstration pool: it changes whenever the prompt does."""
    return hashlib.sha256(INSTRUCTION.encode() + Path(path).read_bytes()).hexdigest()[:16]


def build_prompt(passage: Passage, demos: list[Demo]) -> list[Message]:
    """System instruction, then each demonstration as a user/assistant pair, then the passage."""
    examples = [(user_message(d.title, d.text), assistant_message(d.triples)) for d in demos]
    return chat_messages(user_message(passage.title, passage.text), system=INSTRUCTION, demos=examples)


class DemoSelector:
    """Chooses, per passage, the `k` demonstrations whose embeddings are most cosine-similar (best first).

    The pool is embedded once, on first use. Both sides embed the user message, so passage and
    demonstration are compared in the same form.
    """

    def __init__(self, encoder: TextEncoder, demos: list[Demo]) -> None:
        self.encoder = encoder
        self.demos = demos
        self._pool: np.ndarray | None = None

    def _embed(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        vectors = np.asarray(self.encoder.encode(texts, kind="passage", show_progress=show_progress), dtype=np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)

    def choose(self, passages: list[Passage], k: int, show_progress: bool = False) -> list[tuple[int, ...]]:
        """The pool positions of each passage's `k` demonstrations, best first."""
        if k <= 0 or not passages:
            return [() for _ in passages]
        if self._pool is None:
            self._pool = self._embed([user_message(d.title, d.text) for d in self.demos])
        scores = self._embed([user_message(p.title, p.text) for p in passages], show_progress) @ self._pool.T
        return [tuple(int(i) for i in row) for row in np.argsort(-scores, axis=1, kind="stable")[:, :k]]
