"""Knowledge triples `<head; relation; tail>`: the unit KiRAG's Aligner scores and chains."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from datamodules.types import normalize_space

_ANGLED = re.compile(r"<([^<>]*)>")
_WORD = re.compile(r"\w+")
_PAIRS = {'"': '"', "'": "'", "`": "`", "\u201c": "\u201d", "\u2018": "\u2019", "(": ")", "[": "]", "{": "}"}
_LOOSE_QUOTES = "\"`\u201c\u201d"  # quotes stripped from a part's ends even when unpaired

Parts = tuple[str, str, str]


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


# Function words carry no evidence of which sentence a triple came from.
_STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were which who with".split()
)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - _STOPWORDS


def sentence_index(parts: Parts, sentences: Sequence[str]) -> int:
    """Index of the sentence sharing the most words with the triple (stopwords aside; first on ties).

    Words of the relation and tail count first and the head's only break ties: the head is often
    the passage's subject, named in several sentences, while the tail is the specific fact.
    """
    if not sentences:
        return -1
    head, rest = _words(parts[0]), _words(parts[1] + " " + parts[2])
    scores = [(len(rest & words), len(head & words)) for words in map(_words, sentences)]
    return scores.index(max(scores))


def _clean_part(part: str) -> str:
    """Strip whitespace, enclosing quote/bracket pairs, and stray double quotes at the ends."""
    part = normalize_space(part)
    while True:
        before = part
        if len(part) >= 2 and _PAIRS.get(part[0]) == part[-1]:
            part = part[1:-1].strip()
        part = part.strip(_LOOSE_QUOTES).strip()
        if part == before:
            return part


def _unwrap(parts: list[str]) -> list[str]:
    """Remove a quote/bracket pair around the whole triple, as in `<'a; b; c'>` or `<(a; b; c)>`."""
    first, last = parts[0], parts[-1]
    close = _PAIRS.get(first[:1])
    if len(parts) > 1 and close and last.endswith(close) and close not in first[1:] and first[0] not in last[:-1]:
        return [first[1:], *parts[1:-1], last[:-1]]
    return parts


def parse_triples(output: str) -> tuple[list[Parts], int]:
    """Parse every `<head; relation; tail>` in an LM output.

    Returns the well-formed triples (three non-empty parts, deduplicated by their normalised
    text, in order of appearance) and the number of `<...>` matches rejected. Text outside the
    angle brackets (numbering, bullets, commentary) is ignored. Never raises.
    """
    triples: list[Parts] = []
    seen: set[str] = set()
    rejected = 0
    for match in _ANGLED.finditer(output if isinstance(output, str) else ""):
        parts = [_clean_part(p) for p in _unwrap([p.strip() for p in match.group(1).split(";")])]
        if len(parts) != 3 or not all(parts):
            rejected += 1
            continue
        key = triple_key(*parts)
        if key not in seen:
            seen.add(key)
            triples.append((parts[0], parts[1], parts[2]))
    return triples, rejected
