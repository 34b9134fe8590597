"""The data types: triple ids and texts, the sentence a triple came from, passage ids."""

from core.text import sentence_index
from core.types import Passage, Triple, passage_id, triple_id, triple_key, triple_text


def test_triple_id_ignores_case_and_whitespace_and_text_is_the_angled_form():
    a = Triple.make(" Ostrel ", "founded  by", "Ana\nCorvel", "p1")
    b = Triple.make("ostrel", "Founded by", "ANA CORVEL", "p2")
    assert a.id == b.id == triple_id("Ostrel", "founded by", "Ana Corvel")
    assert a.id != triple_id("Ostrel", "founded by", "Ana Corvel Jr")
    assert (a.head, a.relation, a.tail, a.passage_id) == ("Ostrel", "founded by", "Ana Corvel", "p1")
    assert a.text == triple_text("Ostrel", "founded by", "Ana Corvel") == "<Ostrel; founded by; Ana Corvel>"


def test_sentence_index_picks_the_sentence_sharing_most_words():
    sentences = [
        "The Journal of Physics is a journal published by the Institute.",
        "The journal was first published in January 1960.",
        "Its editor is Jan Sol.",
    ]
    assert sentence_index(("Journal of Physics", "published by", "Institute"), sentences) == 0
    # The head is named in the first sentence, but the fact is in the second.
    assert sentence_index(("Journal of Physics", "first published in", "January 1960"), sentences) == 1
    assert sentence_index(("Journal of Physics", "editor", "Jan Sol"), sentences) == 2
    assert sentence_index(("x", "y", "z"), sentences) == 0  # no overlap anywhere: the first sentence
    assert sentence_index(("Journal", "editor", "Jan Sol"), []) == -1
    assert Triple.make("Journal of Physics", "editor", "Jan Sol", "p", sentences).sentence_index == 2


def test_plain_text_is_the_parts_joined_by_spaces():
    t = Triple.make(" Ostrel ", "founded  by", "Ana\nCorvel", "p1")
    assert t.plain_text == "Ostrel founded by Ana Corvel"
    assert triple_key("Ostrel", " Founded by", "ANA  corvel") == "ostrel; founded by; ana corvel"


def test_passage_ids_ignore_whitespace_and_sentences_are_split_when_missing():
    p = Passage.make("Drusk", "Drusk is a town.  It holds a wool market.")
    assert p.id == passage_id("Drusk", "Drusk is a town. It holds a wool market.") == passage_id(" Drusk ", p.text)
    assert p.id != passage_id("Drusk (Orvland)", p.text)
    assert p.sentences == ["Drusk is a town.", "It holds a wool market."]
    q = Passage.make("Drusk", sentences=["Drusk is a town.", " ", "It holds a wool market."])
    assert q == p
