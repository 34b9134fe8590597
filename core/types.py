"""The project's data types: passages, questions and knowledge triples. Every loader produces them,
every stage consumes them."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from core.text import normalize_space, sentence_index, split_sentences


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


def triple_text(head: str, relation: str, tail: str) -> str:
    """The one textual form of a triple, used in prompts, by the Aligner and in chains."""
    return f"<{head}; {relation}; {tail}>"


def triple_key(head: str, relation: str, tail: str) -> str:
    """The normalised fact text (lowercase, whitespace collapsed) that a triple's id hashes."""
    return "; ".join(normalize_space(part).lower() for part in (head, relation, tail))


def triple_id(head: str, relation: str, tail: str) -> str:
    """Stable id of a fact: the same text has the same id in every passage."""
    return hashlib.sha1(triple_key(head, relation, tail).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Triple:
    """A knowledge triple `<head; relation; tail>` of one passage: the unit KiRAG's Aligner scores and chains."""

    id: str
    head: str
    relation: str
    tail: str
    passage_id: str
    sentence_index: int = -1  # the passage sentence sharing most words with the triple; -1: no sentences

    @classmethod
    def make(cls, head: str, relation: str, tail: str, passage_id: str, sentences: Sequence[str] = ()) -> "Triple":
        head, relation, tail = normalize_space(head), normalize_space(relation), normalize_space(tail)
        return cls(triple_id(head, relation, tail), head, relation, tail, passage_id,
                   sentence_index((head, relation, tail), sentences))

    @property
    def text(self) -> str:
        return triple_text(self.head, self.relation, self.tail)

    @property
    def plain_text(self) -> str:
        """`head relation tail` as plain words, to match plain-text triples (gold evidences, LM output)."""
        return f"{self.head} {self.relation} {self.tail}"
