"""Parsing LM outputs into `<head; relation; tail>` triples."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.types import triple_id
from kg.triple_parser import parse_triples


# The same triples, angled and in the bracketless lines the packaged LM sometimes writes instead.
LAYOUTS = {
    "angled": ("Here are the triples:\n"
               "1. <Ostrel; founded by; Ana Corvel>\n"
               "2.   <  Ostrel ;  located   in ; Drusk >\n"
               "- <Ana Corvel; occupation; brewer, farmer>\n"
               "* <Ana Corvel;born in;1901>  That is all.", 0),
    "bare lines": ('"Ostrel; founded by; Ana Corvel"\n'
                   "1. Ostrel ;  located   in ; Drusk\n"
                   "- Ana Corvel; occupation; brewer, farmer\n"
                   "Ana Corvel;born in;1901\n"
                   "Commentary; with; too; many parts\n"
                   "A note; without the third part", 1),
}


@pytest.mark.parametrize("output, rejected", LAYOUTS.values(), ids=LAYOUTS)
def test_parses_every_triple_ignoring_layout_numbering_and_commentary(output, rejected):
    assert parse_triples(output) == ([
        ("Ostrel", "founded by", "Ana Corvel"),
        ("Ostrel", "located in", "Drusk"),
        ("Ana Corvel", "occupation", "brewer, farmer"),
        ("Ana Corvel", "born in", "1901"),
    ], rejected)


def test_strips_quotes_and_brackets_around_parts_and_around_the_whole_triple():
    output = (
        "<\"Ostrel\"; 'founded by'; \u201cAna Corvel\u201d>\n<(Vell); [is a]; {river}>\n"
        "<'Drusk; is a; town'>\n<\"Tell; flows into; sea\">"
    )
    assert parse_triples(output)[0] == [
        ("Ostrel", "founded by", "Ana Corvel"),
        ("Vell", "is a", "river"),
        ("Drusk", "is a", "town"),
        ("Tell", "flows into", "sea"),
    ]


def test_keeps_brackets_and_apostrophes_inside_parts():
    assert parse_triples("<Paris (France); capital of; France's republic>")[0] == [
        ("Paris (France)", "capital of", "France's republic")
    ]


def test_rejects_and_counts_wrong_arity_and_empty_parts():
    output = "<a; b>\n<a; b; c; d>\n<a; ; c>\n<; b; c>\n<a; b; \"\">\n<>\n<only text>\n<x; y; z>"
    triples, rejected = parse_triples(output)
    assert triples == [("x", "y", "z")]
    assert rejected == 7


def test_deduplicates_identical_triples_within_one_output_by_normalised_text():
    triples, rejected = parse_triples("<A; b; C>\n<a;  B ; c>\n<A; b; C>\n<A; b; D>")
    assert triples == [("A", "b", "C"), ("A", "b", "D")]
    assert rejected == 0


def test_empty_outputs_and_lines_with_fewer_than_two_semicolons_give_nothing():
    assert parse_triples("") == ([], 0)
    assert parse_triples("no triples here; none at all\nThe Monster; is a song by Eminem") == ([], 0)


def test_bare_lines_are_ignored_when_the_output_has_angled_triples():
    assert parse_triples("<a; b; c>\nd; e; f") == ([("a", "b", "c")], 0)


def _check(output: str) -> None:
    triples, rejected = parse_triples(output)
    assert rejected >= 0
    for parts in triples:
        assert len(parts) == 3 and all(isinstance(p, str) and p.strip() for p in parts)
    assert len({triple_id(*t) for t in triples}) == len(triples)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parser_never_raises_on_arbitrary_text(output):
    _check(output)


TOKENS = st.sampled_from(["<", ">", ";", '"', "'", "\u201c", "(", ")", "\n", " ", "1.", "-", "head", "rel", "tail", ","])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(TOKENS, st.text(max_size=5)), max_size=40).map("".join))
def test_parser_never_raises_on_bracket_soup(output):
    _check(output)
