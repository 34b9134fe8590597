"""The shared text utilities: SQuAD normalisation and scores (checked against torchmetrics' SQuAD
metric), the one stopword list and what uses it, token and stem F1, whole-word containment."""

import pytest
from bm25s.stopwords import STOPWORDS_EN
from hypothesis import given, settings
from hypothesis import strategies as st
from torchmetrics.functional.text import squad

from core.text import (
    STOPWORDS,
    answer_scores,
    contains_words,
    content_words,
    is_content,
    normalize_space,
    overlap_f1,
    sentence_index,
    split_sentences,
    stem_f1,
    stems,
    token_f1,
    tokens,
)


def torchmetrics_scores(prediction: str, answers: list[str]) -> dict[str, float]:
    result = squad(preds=[{"prediction_text": prediction, "id": "0"}],
                   target=[{"answers": {"answer_start": [0] * len(answers), "text": answers}, "id": "0"}])
    return {"em": float(result["exact_match"]) / 100, "f1": float(result["f1"]) / 100}


PIECES = st.sampled_from(["a", "an", "the", "The", "A", "AN", "tHe", "Eiffel", "EIFFEL", "tower", "Tower", "Paris",
                          "in", "of", "river", "1998", ",", ".", "!", "'s", "-", '"', "(", ")", " ", "\n", "\t",
                          "an-the", "theatre", "a.b", "l'a", "Ünïcode", "ß"])
TEXT = st.one_of(
    st.lists(st.one_of(PIECES, st.text(max_size=3)), max_size=10).map(" ".join),
    st.lists(PIECES, max_size=10).map("".join),  # punctuation glued to words, articles inside words
    st.just(""),
)


@settings(max_examples=300, deadline=None)
@given(prediction=TEXT, answers=st.lists(TEXT, min_size=1, max_size=3))
def test_answer_scores_equal_torchmetrics_squad(prediction, answers):
    ours, theirs = answer_scores(prediction, answers), torchmetrics_scores(prediction, answers)
    assert ours["em"] == theirs["em"]
    # torchmetrics computes F1 in float32 (then x100): its value carries float32 rounding, ~1e-7.
    assert ours["f1"] == pytest.approx(theirs["f1"], abs=1e-6, rel=0)


def test_answer_scores_by_hand():
    # "the Eiffel Tower in Paris" -> "eiffel tower in paris": P = 2/4, R = 2/2, F1 = 2·2/(4+2)
    scores = answer_scores("the Eiffel Tower in Paris", ["Eiffel Tower"])
    assert scores == {"em": 0.0, "f1": pytest.approx(2 / 3, abs=1e-12)}
    # "The Drusk!" normalises to "drusk": exact match with the alias.
    assert answer_scores("The Drusk!", ["Vell", "drusk"]) == {"em": 1.0, "f1": 1.0}
    # prediction tokens {ana, corvel, brewer} vs gold {ana, corvel}: P=2/3, R=1, F1=0.8
    scores = answer_scores("Ana Corvel, brewer", ["Ana Corvel"])
    assert scores["em"] == 0.0 and scores["f1"] == pytest.approx(0.8)
    assert answer_scores("", ["the"]) == {"em": 1.0, "f1": 1.0}  # both empty after normalisation
    assert answer_scores("", ["Drusk"]) == answer_scores("Drusk", ["a"]) == {"em": 0.0, "f1": 0.0}
    with pytest.raises(ValueError, match="without gold answers"):
        answer_scores("Drusk", [])


def test_tokens_are_squad_normalised():
    assert tokens("The  Eiffel-Tower, in   PARIS!") == ("eiffeltower", "in", "paris")
    assert tokens("an apple a day; the end") == ("apple", "day", "end")
    assert tokens("theatre") == ("theatre",)  # articles only as whole words


LUCENE = ("a an and are as at be but by for if in into is it no not of on or such that the their then there these they "
          "this to was will with")
QUESTION_WORDS = "who whom whose what which when where why how"


def test_one_stopword_list_holds_lucenes_and_the_question_words():
    assert set(LUCENE.split()) == set(STOPWORDS_EN) and set(LUCENE.split()) <= STOPWORDS
    assert set(QUESTION_WORDS.split()) <= STOPWORDS
    assert {"who", "the", "from", "did", "has"} <= STOPWORDS
    assert not {"river", "born", "city", "album"} & STOPWORDS


def test_is_content_stems_and_sentence_index_use_the_stopword_list():
    assert not is_content("who") and not is_content(" From ") and not is_content("The") and not is_content("?!")
    assert is_content("river") and is_content("1998") and is_content("Drusk,")
    assert stems("Who founded the rivers from where?") == ("found", "river")
    assert content_words("What did Drusk's brewers brew?") == {"drusk", "brewer", "brew"}
    # Only stopwords tie the question-like first sentence to the triple: the second one wins.
    sentences = ["Who is from where?", "The market of Drusk."]
    assert sentence_index(("who", "from", "Drusk"), sentences) == 1


def test_f1_helpers_by_hand():
    assert overlap_f1(["a", "b", "b"], ["b", "b", "c", "d"]) == pytest.approx(2 * 2 / 7)
    assert overlap_f1([], ["a"]) == overlap_f1([], []) == 0.0
    assert token_f1("The Vell river", "vell RIVER valley") == pytest.approx(2 * 2 / 5)
    assert stem_f1("directed by", "director direct") == pytest.approx(2 * 1 / 3)  # "direct" on both sides
    assert stem_f1("located in Drusk", "Drusk location") == 1.0


def test_contains_words_matches_whole_word_sequences():
    assert contains_words("The Vell valley, in Kestria", "vell valley")
    assert not contains_words("Vellmark is a province", "Vell")
    assert not contains_words("the Vell", "the")  # nothing left after normalisation
    assert contains_words("Ana Corvel (brewer)", "Corvel brewer")


def test_spaces_and_sentences():
    assert normalize_space("  Ostrel\n\tBrewing  ") == "Ostrel Brewing"
    assert split_sentences("Drusk is a town. It lies on the Vell! Is it old? 1530 saw its market.") == [
        "Drusk is a town.", "It lies on the Vell!", "Is it old?", "1530 saw its market."]
    # a new sentence starts only at an upper-case letter, a digit, a quote or a bracket
    assert split_sentences("It is 3.5 km long, e.g. near Drusk. (It floods.)") == [
        "It is 3.5 km long, e.g. near Drusk.", "(It floods.)"]
