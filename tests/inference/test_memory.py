"""MIND's memory: deduplicated facts under a capacity, and entities searched only once."""

import pytest

from inference.memory import Fact, Memory


def test_memory_dedups_keeps_the_most_confident_and_respects_capacity():
    m = Memory(capacity=2)
    m.add(Fact("Drusk is on Lake Ammer", 0.4))
    m.add(Fact("drusk  is on lake ammer", 0.9))  # the same fact: one entry, higher confidence
    assert len(m) == 1 and m.render() == "- Drusk is on Lake Ammer" and m.facts["drusk is on lake ammer"].confidence == 0.9
    m.add(Fact("Ana Corvel was born in Drusk", 0.5))
    m.add(Fact("Ostrel Brewing makes ale", 0.7))  # over capacity: the least confident (0.5) goes
    assert m.render() == "- Drusk is on Lake Ammer\n- Ostrel Brewing makes ale"
    m.add(Fact("a weak fact", 0.1))  # weaker than everything kept: it is the one dropped
    assert len(m) == 2 and "weak" not in m.render()
    with pytest.raises(ValueError):
        Memory(capacity=0)


def test_memory_blocks_searching_an_entity_twice():
    m = Memory()
    assert m.new_entities(["Drusk", "Ana Corvel", "drusk"]) == ["Drusk", "Ana Corvel"]
    assert m.new_entities(["ANA CORVEL", "Lake Ammer"]) == ["Lake Ammer"]


def test_memory_repeat_with_lower_confidence_keeps_the_higher():
    m = Memory(capacity=2)
    m.add(Fact("Drusk is on Lake Ammer", 0.75, "p1"))
    m.add(Fact("  DRUSK is on\nlake   Ammer ", 0.25, "p9"))  # the same fact, less confident: nothing changes
    assert len(m) == 1 and m.facts["drusk is on lake ammer"] == Fact("Drusk is on Lake Ammer", 0.75, "p1")
    m.add(Fact("drusk IS ON lake ammer", 0.875, "p9"))  # more confident: the confidence rises, the text stays
    assert m.facts["drusk is on lake ammer"] == Fact("Drusk is on Lake Ammer", 0.875, "p1")
    # the raised confidence is the one eviction sees: 0.5 is the weakest when a third fact comes
    m.add(Fact("Ana Corvel was born in Drusk", 0.5))
    m.add(Fact("Ostrel Brewing makes ale", 0.625))
    assert m.render() == "- Drusk is on Lake Ammer\n- Ostrel Brewing makes ale"


def test_on_equal_confidence_the_oldest_fact_is_evicted():
    m = Memory(capacity=2)
    m.add(Fact("Drusk is on Lake Ammer", 0.5))
    m.add(Fact("Ana Corvel was born in Drusk", 0.5))
    m.add(Fact("Ostrel Brewing makes ale", 0.9))  # the two 0.5 facts tie: the older one goes
    assert [f.text for f in m.facts.values()] == ["Ana Corvel was born in Drusk", "Ostrel Brewing makes ale"]
    m.add(Fact("Velm is a city", 0.5))  # ties with the kept 0.5 fact, which is older: that one goes, not the newcomer
    assert [f.text for f in m.facts.values()] == ["Ostrel Brewing makes ale", "Velm is a city"]
