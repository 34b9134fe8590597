"""Word-level signals, the RIND trigger (dynamic and fixed threshold), the entity confidence, their
relaxed forms (which must agree with the hard decisions) and the saved MIND parameters."""

import json
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from core.records import DataError
from models.uncertainty import (
    MindParams,
    WordSignals,
    decide,
    dynamic_threshold,
    entity_confidence,
    entity_logits,
    group_words,
    max_rind_score,
    rind_scores,
    token_confidence,
    trigger_logits,
    word_signals,
)


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


def test_question_words_are_not_content():
    w = word_signals(["Who", " founded", " it", "?"], torch.ones(4), torch.ones(4))
    assert w.words == ["Who", "founded", "it", "?"] and w.content.tolist() == [0.0, 1.0, 0.0, 0.0]


def signals(entropy, attention, content):
    n = len(entropy)
    return WordSignals([f"w{i}" for i in range(n)], [(i, i + 1) for i in range(n)],
                       torch.tensor(entropy), torch.tensor(attention), torch.tensor(content))


def test_dynamic_threshold_trigger_by_hand():
    s = signals([1.0, 3.0, 2.0], [0.2, 0.5, 0.1], [1.0, 1.0, 0.0])
    assert rind_scores(s).tolist() == pytest.approx([0.2, 1.5, 0.0])
    # θ = α·mean(H) + β·mean(A) = α·2 + β·0.8/3
    fired = decide(s, MindParams(alpha=0.5, beta=1.0))
    assert fired.retrieve and fired.word == "w1"
    assert fired.threshold == pytest.approx(1.0 + 0.8 / 3) and fired.max_score == pytest.approx(1.5)
    assert not decide(s, MindParams(alpha=0.7, beta=1.0)).retrieve  # θ = 1.4 + 0.267 > 1.5
    # γ, δ and the entity threshold play no part in the trigger
    assert decide(s, MindParams(alpha=0.5, beta=1.0, gamma=9.0, delta=9.0, threshold=9.0)) == fired


def test_fixed_threshold_and_stopwords_never_trigger():
    s = signals([5.0, 0.1], [0.9, 0.1], [0.0, 1.0])  # the uncertain word is a stopword
    fired = decide(s, MindParams(), fixed=0.005)
    assert fired.retrieve and fired.word == "w1" and fired.threshold == 0.005
    assert not decide(s, MindParams(), fixed=0.02).retrieve
    # the fixed threshold ignores α and β
    assert decide(s, MindParams(alpha=100.0, beta=100.0), fixed=0.005).retrieve
    empty = signals([], [], [])
    assert not decide(empty, MindParams()).retrieve and not decide(empty, MindParams(), fixed=0.0).retrieve
    assert decide(empty, MindParams()).threshold == math.inf and decide(empty, MindParams()).word is None


def test_token_confidence_by_hand_and_never_nan():
    h, a = torch.tensor([0.0, 3.0]), torch.tensor([0.1, 0.9])
    # max(1/(1+0) + 0.2·0.1, 1/(1+3) + 0.2·0.9) = max(1.02, 0.43)
    assert token_confidence(h, a, MindParams()) == pytest.approx(1.02)
    assert token_confidence(h, a, MindParams(gamma=0.1, delta=1.0)) == pytest.approx(0.1 / 4 + 0.9)
    assert token_confidence(torch.tensor([]), torch.tensor([]), MindParams()) == 0.0
    assert not math.isnan(token_confidence(torch.tensor([float("inf")]), torch.tensor([0.5]), MindParams()))


def test_batched_formulas_by_hand_ignore_padding():
    # row 0: two words; row 1: one word, then padding holding values that would win were they read
    h = torch.tensor([[1.0, 3.0], [2.0, 100.0]])
    a = torch.tensor([[0.2, 0.5], [0.4, 100.0]])
    s = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    mask = torch.tensor([[True, True], [True, False]])
    assert max_rind_score(h, a, s, mask).tolist() == pytest.approx([0.2, 0.8])
    assert dynamic_threshold(h, a, mask, 0.5, 1.0).tolist() == pytest.approx([0.5 * 2 + 0.35, 0.5 * 2 + 0.4])
    assert trigger_logits(h, a, s, mask, 0.5, 1.0, 0.1).tolist() == pytest.approx([(0.2 - 1.35) / 0.1, (0.8 - 1.4) / 0.1])
    # conf = max over real tokens of γ/(1+H) + δ·A
    assert entity_confidence(h, a, mask, 1.0, 0.2).tolist() == pytest.approx([1 / 2 + 0.04, 1 / 3 + 0.08])
    assert entity_logits(h, a, mask, 1.0, 0.2, 0.5, 0.1).tolist() == pytest.approx([0.4, (1 / 3 + 0.08 - 0.5) / 0.1])


def padded(rows: list[torch.Tensor], fill: float) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(r) for r in rows)
    values = torch.full((len(rows), width), fill)
    mask = torch.zeros(len(rows), width, dtype=torch.bool)
    for i, r in enumerate(rows):
        values[i, : len(r)], mask[i, : len(r)] = r, True
    return values, mask


# Values on a grid of eighths and sentences of 1, 2, 4 or 8 words: every sum, mean and product is
# exact in float32, so S and θ tie exactly when they tie at all, and a difference is never a rounding
# error (a logit within rounding of 0 would make σ exactly 0.5 on one side of a tie and not the other).
EIGHTHS = st.integers(0, 40).map(lambda k: k / 8)
WORD = st.tuples(EIGHTHS, st.integers(0, 8).map(lambda k: k / 8), st.sampled_from([0.0, 1.0]))
SENTENCE = st.sampled_from([1, 2, 4, 8]).flatmap(lambda n: st.lists(WORD, min_size=n, max_size=n))


@settings(max_examples=300, deadline=None)
@given(sentences=st.lists(SENTENCE, min_size=1, max_size=4), alpha=st.integers(0, 24).map(lambda k: k / 8),
       beta=st.integers(0, 24).map(lambda k: k / 8), temperature=st.sampled_from([0.01, 0.1, 1.0]))
def test_relaxed_trigger_agrees_with_the_hard_decision(sentences, alpha, beta, temperature):
    """P(retrieve) > 0.5 exactly when MIND's loop retrieves, for every sentence of a padded batch."""
    rows = [signals(*map(list, zip(*words))) for words in sentences]
    h, mask = padded([r.entropy for r in rows], 7.0)
    a, _ = padded([r.max_attention for r in rows], 7.0)
    s, _ = padded([r.content for r in rows], 1.0)
    relaxed = torch.sigmoid(trigger_logits(h, a, s, mask, alpha, beta, temperature)) > 0.5
    params = MindParams(alpha=alpha, beta=beta)
    assert relaxed.tolist() == [decide(r, params).retrieve for r in rows]


def test_a_tie_does_not_trigger_in_either_form():
    s = signals([2.0, 1.0], [0.5, 0.5], [1.0, 0.0])  # S = (1, 0); θ = 0.5·1.5 + 0.5·0.5 = 1
    assert not decide(s, MindParams(alpha=0.5, beta=0.5)).retrieve
    mask = torch.ones(1, 2, dtype=torch.bool)
    logit = trigger_logits(s.entropy[None], s.max_attention[None], s.content[None], mask, 0.5, 0.5, 0.1)
    assert logit.item() == 0.0 and torch.sigmoid(logit).item() == 0.5


FLOATS = st.floats(0.0, 5.0, width=32)


@settings(max_examples=200, deadline=None)
@given(entities=st.lists(st.lists(st.tuples(FLOATS, st.floats(0.0, 1.0, width=32)), min_size=1, max_size=6),
                         min_size=1, max_size=4),
       gamma=st.floats(0.0, 3.0, width=32), delta=st.floats(0.0, 3.0, width=32))
def test_token_confidence_is_the_batched_confidence_of_one_row(entities, gamma, delta):
    params = MindParams(gamma=gamma, delta=delta)
    tokens = [(torch.tensor([e for e, _ in t]), torch.tensor([x for _, x in t])) for t in entities]
    h, mask = padded([e for e, _ in tokens], 0.0)  # padding of H = 0 would give the highest confidence
    a, _ = padded([x for _, x in tokens], 9.0)
    batched = entity_confidence(h, a, mask, gamma, delta)
    for row, (e, x) in enumerate(tokens):
        one = float(entity_confidence(e[None], x[None], torch.ones(1, len(e), dtype=torch.bool), gamma, delta))
        assert token_confidence(e, x, params) == one == float(batched[row])


# --- MindParams ---------------------------------------------------------------------------------


def test_params_save_and_load_round_trip(tmp_path):
    learned = MindParams(0.4, 1.5, 1.0, 0.6, 0.5)
    path = learned.save(tmp_path / "runs" / "trigger.json")  # creates the folder
    assert path == tmp_path / "runs" / "trigger.json"
    assert json.loads(path.read_text()) == {"alpha": 0.4, "beta": 1.5, "gamma": 1.0, "delta": 0.6, "threshold": 0.5,
                                            "attention": None}
    assert MindParams.load(path) == learned
    calibrated = MindParams(0.04, 1.5, 1.0, 6.0, 0.5, attention="raw")
    assert MindParams.load(calibrated.save(path)) == calibrated
    assert MindParams.load(MindParams(threshold=None).save(path)) == MindParams()  # top k: no threshold
    path.write_text(json.dumps({"alpha": 1, "beta": 2, "gamma": 3, "delta": 4}))  # integers, no threshold
    loaded = MindParams.load(path)
    assert loaded == MindParams(1.0, 2.0, 3.0, 4.0, None) and isinstance(loaded.alpha, float)


@pytest.mark.parametrize("content, error", [
    ({"alpha": 0.4}, "missing or non-numeric beta, gamma, delta"),
    ({"alpha": "0.4", "beta": 1, "gamma": 1, "delta": 1}, "missing or non-numeric alpha$"),
    ({"alpha": 1, "beta": 1, "gamma": None, "delta": 1}, "non-numeric gamma$"),
    ({"alpha": 1, "beta": 1, "gamma": 1, "delta": 1, "threshold": "high"}, "threshold should be a number or null"),
    ("{not json", "malformed JSON"),
    ("[0.4, 1.5, 1.0, 0.6]", "expected a JSON object of alpha, beta, gamma, delta, threshold, attention, found a list"),
    ('{"alpha": NaN, "beta": 1, "gamma": 1, "delta": 1}', "alpha must be a finite number, got nan"),
    ('{"alpha": 1, "beta": -Infinity, "gamma": 1, "delta": 1}', "beta must be a finite number, got -inf"),
    ({"alpha": 1, "beta": 1, "gamma": 1, "delta": 1, "attention": "max"}, "attention should be one of raw, sentence"),
])
def test_params_load_names_what_is_wrong(tmp_path, content, error):
    path = tmp_path / "trigger.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    with pytest.raises(ValueError, match=error) as raised:
        MindParams.load(path)
    assert str(path) in str(raised.value)


def test_params_load_of_a_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.json.*do not exist"):
        MindParams.load(tmp_path / "missing.json")
    with pytest.raises(DataError, match="not a file"):
        MindParams.load(tmp_path)  # a folder is no parameters file


@pytest.mark.parametrize("name", ["alpha", "beta", "threshold"])
def test_params_that_are_not_finite_are_refused(name):
    with pytest.raises(ValueError, match=f"{name} must be a finite number, got nan"):
        MindParams(**{"threshold": 0.5, name: float("nan")})


def test_stopword_only_sentence_does_not_trigger_at_threshold_zero():
    # Every word is a stopword or punctuation (s = 0), with large signals: max S = 0, and θ = 0 does not fire.
    pieces = ["It", " is", " of", " the", ",", " and", " to", " it", "?"]
    words = word_signals(pieces, torch.full((9,), 5.0), torch.full((9,), 0.9))
    assert words.words == ["It", "is", "of", "the", ",", "and", "to", "it", "?"]
    assert words.content.tolist() == [0.0] * 9
    fixed = decide(words, MindParams(), fixed=0.0)
    assert (fixed.retrieve, fixed.max_score, fixed.threshold) == (False, 0.0, 0.0)
    dynamic = decide(words, MindParams(alpha=0.0, beta=0.0))
    assert (dynamic.retrieve, dynamic.max_score, dynamic.threshold) == (False, 0.0, 0.0)
    # one content word with any positive signal fires at θ = 0
    content = word_signals(pieces + [" Drusk"], torch.full((10,), 5.0), torch.full((10,), 0.9))
    assert decide(content, MindParams(), fixed=0.0).retrieve
    assert decide(content, MindParams(alpha=0.0, beta=0.0)).retrieve
