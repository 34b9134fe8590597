"""The chain contract shared by training and inference: the Aligner's query, KiRAG's candidate set,
and the chains file."""

import json

import pytest

from core.chains import ChainRecord, aligner_query, candidate_triples, read_chains, write_chains
from core.records import DataError
from core.types import Triple


def test_query_is_the_question_alone_at_the_first_hop_then_the_chain():
    assert aligner_query("Who founded X?", []) == "Who founded X?"
    assert aligner_query("Who founded X?", ["<X; founded by; Y>", "<Y; born in; Z>"]) == (
        "Who founded X?\nknowledge triples: <X; founded by; Y>. <Y; born in; Z>."
    )


def test_candidates_are_distinct_facts_outside_the_chain_in_input_order():
    chain = [Triple.make("Ostrel Brewing", "founded by", "Ana Corvel", "p1")]
    founded_elsewhere = Triple.make("Ostrel Brewing", "founded by", "Ana Corvel", "p9")  # the chain fact, another passage
    respelled = Triple.make(" ostrel  BREWING", "Founded by ", "ana corvel", "p3")  # the chain fact, other spacing and case
    born = Triple.make("Ana Corvel", "born in", "Drusk", "p2")
    born_again = Triple.make("Ana Corvel", "born in", "Drusk", "p3")
    lake = Triple.make("Drusk", "lies on", "Lake Ammer", "p3")
    brewery = Triple.make("Ostrel Brewing", "located in", "Ardlow", "p1")
    triples = [founded_elsewhere, born, respelled, lake, born_again, chain[0], brewery, lake]
    assert founded_elsewhere.id == respelled.id == chain[0].id and born.id == born_again.id
    candidates = candidate_triples(triples, chain)
    assert candidates == [born, lake, brewery]  # the first instance of each fact, in input order
    assert candidates[0].passage_id == "p2"
    assert candidate_triples(triples, []) == [founded_elsewhere, born, lake, brewery]
    assert candidate_triples(iter(triples), chain) == candidates  # any iterable
    assert candidate_triples([], chain) == [] and candidate_triples(chain, chain) == []


def records() -> list[ChainRecord]:
    chain = (Triple.make("A", "links to", "B", "p1", ["A links to B.", "B is a town."]),
             Triple.make("B", "links to", "C", "p2"))
    negatives = ((Triple.make("A", "is", "old", "p1"),), ())
    return [ChainRecord("q0", "Where does A lead?", "bridge", True, True, chain, negatives),
            ChainRecord("q1", "A or B?", "comparison", False, False, chain[::-1], negatives[::-1])]


def test_chains_round_trip_and_errors_name_file_line_and_field(tmp_path):
    path = tmp_path / "out" / "chains.jsonl"
    write_chains(path, records())
    assert read_chains(path) == records() and len(path.read_text().splitlines()) == 2
    record = records()[0].to_dict()
    del record["chain"][1]["tail"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(records()[1].to_dict()) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(DataError, match=r"bad.jsonl: line 2, chain\[1\]: missing field 'tail'"):
        read_chains(bad)
    record = records()[0].to_dict()
    record["negatives"].pop()
    bad.write_text(json.dumps(records()[1].to_dict()) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(DataError, match=r"line 2: field 'negatives' should hold one list per chain triple"):
        read_chains(bad)
    bad.write_text(json.dumps(records()[0].to_dict()) + "\n" + json.dumps(records()[0].to_dict()) + "\n")
    with pytest.raises(DataError, match=r"line 2: question_id 'q0' already appears at line 1"):
        read_chains(bad)


def test_a_triple_id_and_sentence_index_have_defaults(tmp_path):
    record = records()[0].to_dict()
    for triple in record["chain"]:
        del triple["id"], triple["sentence_index"]
    path = tmp_path / "chains.jsonl"
    path.write_text(json.dumps(record) + "\n")
    chain = read_chains(path)[0].chain
    assert [t.id for t in chain] == [t.id for t in records()[0].chain]  # the hash of the text
    assert [t.sentence_index for t in chain] == [-1, -1]
    record["chain"][0]["sentence_index"] = True
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(DataError, match="'sentence_index' should be int, found bool"):
        read_chains(path)
