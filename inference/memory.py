"""MIND's memory: retrieved facts kept across hops with their confidence, rendered into the prompt."""

from __future__ import annotations

from dataclasses import dataclass

from core.text import normalize_space


def _key(text: str) -> str:
    return normalize_space(text).lower()


@dataclass
class Fact:
    text: str  # a passage ("title: text") or a triple ("<h; r; t>")
    confidence: float
    source: str = ""  # passage or triple id


class Memory:
    """At most `capacity` facts, deduplicated by normalised text (a repeat keeps the higher
    confidence); when full, the least confident fact is dropped, the older one on ties. It also
    remembers the entities already searched for, so the loop does not retrieve them again."""

    def __init__(self, capacity: int = 8) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.capacity = capacity
        self.facts: dict[str, Fact] = {}  # insertion order = age
        self.searched: set[str] = set()

    def __len__(self) -> int:
        return len(self.facts)

    def add(self, fact: Fact) -> None:
        key = _key(fact.text)
        old = self.facts.get(key)
        if old is not None:
            old.confidence = max(old.confidence, fact.confidence)
            return
        self.facts[key] = fact
        if len(self.facts) > self.capacity:
            weakest = min(self.facts, key=lambda k: self.facts[k].confidence)  # min keeps the first (oldest) on ties
            del self.facts[weakest]

    def new_entities(self, entities: list[str]) -> list[str]:
        """The entities not searched for yet; they are marked as searched."""
        fresh = []
        for entity in entities:
            key = _key(entity)
            if key and key not in self.searched:
                self.searched.add(key)
                fresh.append(entity)
        return fresh

    def render(self) -> str:
        """The facts, most confident first, one per line (empty when there are none)."""
        ordered = sorted(self.facts.values(), key=lambda f: -f.confidence)
        return "\n".join(f"- {f.text}" for f in ordered)
