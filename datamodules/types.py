"""The project's data types: every loader produces these, every method consumes them."""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, field

_SPACE = re.compile(r"\s+")


def normalize_space(text: str) -> str:
    """Collapse runs of whitespace so that ids and matches ignore layout."""
    return _SPACE.sub(" ", text).strip()


def passage_id(title: str, text: str) -> str:
    """A stable id derived from a passage's title and text (whitespace-insensitive)."""
    key = normalize_space(title) + "\n" + normalize_space(text)
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


@dataclass
class Passage:
    id: str
    title: str
    text: str
    sentences: list[str] = field(default_factory=list)

    @classmethod
    def make(cls, title: str, text: str | None = None, sentences: list[str] | None = None) -> "Passage":
        """Build a passage from its text or its sentences; the id follows from title and text."""
        sentences = [normalize_space(s) for s in (sentences or []) if s.strip()]
        text = normalize_space(text if text is not None else " ".join(sentences))
        title = normalize_space(title)
        return cls(id=passage_id(title, text), title=title, text=text, sentences=sentences or split_sentences(text))

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Question:
    id: str
    question: str
    answers: list[str] = field(default_factory=list)  # the answer first, then its aliases
    gold_passage_ids: list[str] = field(default_factory=list)
    type: str = ""  # bridge, comparison, 2hop, 3hop1, ...
    gold_triples: list[list[str]] = field(default_factory=list)  # [[head, relation, tail], ...]
    decomposition: list[dict] = field(default_factory=list)  # [{"question": ..., "answer": ...}, ...]

    def to_dict(self) -> dict:
        return asdict(self)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")


def split_sentences(text: str) -> list[str]:
    """A light rule-based sentence splitter, used when a format gives no sentences."""
    return [s for s in (p.strip() for p in _SENTENCE_END.split(text)) if s]
