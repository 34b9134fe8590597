"""Word-level signals, the RIND trigger (dynamic and fixed threshold), entity confidence and the memory."""

import math

import pytest
import torch

from inference.memory import Fact, Memory
from inference.uncertainty import WordSignals, decide, entity_confidence, group_words, rind_scores, word_signals


def test_sub_tokens_join_words_and_punctuation_stands_alone():
    pieces = ["The", " Bos", "ton", " Marath", "on", ",", " 19", "98", ".", "\n", "So"]
    assert group_words(pieces) == [(0, 1), (1, 3), (3, 5), (5, 6), (6, 8), (8, 9), (10, 11)]


def test_word_signals_take_mean_entropy_and_summed_attention():
    pieces = ["The", " Bos", "ton", " is"]
    entropy = torch.tensor([0.5, 2.0, 4.0, 1.0])
    attention = torch.tensor([0.1, 0.2, 0.3, 0.05])
    w = word_signals(pieces, entropy, attention)
    assert w.words == ["The", "Boston", "is"]
    assert w.entropy.tolist() == pytest.approx([0.5, 3.0, 1.0])
    assert w.max_attention.tolist() == pytest.approx([0.1, 0.5, 0.05])
    assert w.content.tolist() == [0.0, 1.0, 0.0]  # stopwords get s = 0


def signals(entropy, attention, content):
    n = len(entropy)
    return WordSignals([f"w{i}" for i in range(n)], [(i, i + 1) for i in range(n)],
                       torch.tensor(entropy), torch.tensor(attention), torch.tensor(content))


def test_dynamic_threshold_trigger_by_hand():
    s = signals([1.0, 3.0, 2.0], [0.2, 0.5, 0.1], [1.0, 1.0, 0.0])
    assert rind_scores(s).tolist() == pytest.approx([0.2, 1.5, 0.0])
    # θ = α·mean(H) + β·mean(A) = α·2 + β·0.8/3
    fired = decide(s, alpha=0.5, beta=1.0)
    assert fired.retrieve and fired.word == "w1"
    assert fired.threshold == pytest.approx(1.0 + 0.8 / 3) and fired.max_score == pytest.approx(1.5)
    assert not decide(s, alpha=0.7, beta=1.0).retrieve  # θ = 1.4 + 0.267 > 1.5


def test_fixed_threshold_and_stopwords_never_trigger():
    s = signals([5.0, 0.1], [0.9, 0.1], [0.0, 1.0])  # the uncertain word is a stopword
    assert decide(s, fixed=0.005).retrieve and decide(s, fixed=0.005).word == "w1"
    assert not decide(s, fixed=0.02).retrieve
    empty = signals([], [], [])
    assert not decide(empty).retrieve and not decide(empty, fixed=0.0).retrieve


def test_entity_confidence_by_hand_and_never_nan():
    h, a = torch.tensor([0.0, 3.0]), torch.tensor([0.1, 0.9])
    # max(1/(1+0) + 0.2·0.1, 1/(1+3) + 0.2·0.9) = max(1.02, 0.43)
    assert entity_confidence(h, a) == pytest.approx(1.02)
    assert entity_confidence(h, a, gamma=0.1, delta=1.0) == pytest.approx(0.1 / 4 + 0.9)
    assert entity_confidence(torch.tensor([]), torch.tensor([])) == 0.0
    assert not math.isnan(entity_confidence(torch.tensor([float("inf")]), torch.tensor([0.5])))


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
