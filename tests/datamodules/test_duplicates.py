"""One record per question id and one passage per passage id: duplicates are errors naming both records."""

import json

import pytest

from core.records import DataError
from datamodules.loaders import load_benchmark, load_corpus


def write(path, records):
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


PASSAGES = [{"id": "p1", "title": "Ana Corvel", "text": "Ana Corvel was born in Drusk."},
            {"id": "p2", "title": "Velm", "text": "Velm is a city."}]


def question(qid, gold):
    return {"id": qid, "question": f"question {qid}?", "gold_passage_ids": gold}


@pytest.mark.parametrize("records", [
    [question("q1", ["p1"]), question("q2", ["p2"]), question("q1", ["p2"])],  # one id, two questions
    [question("q1", ["p1"]), question("q2", ["p2"]), question("q1", ["p1"])],  # an exact duplicate record
])
def test_a_repeated_question_id_names_both_records(tmp_path, records):
    questions = write(tmp_path / "q.jsonl", records)
    write(tmp_path / "passages.jsonl", PASSAGES)
    with pytest.raises(DataError, match=r"q\.jsonl: line 3: question id 'q1' already appears at line 1"):
        load_benchmark("unified", questions)


def test_a_repeated_id_in_a_published_format_names_both_records(tmp_path):
    record = {"_id": "h1", "question": "Q?", "answer": "A", "supporting_facts": [["T", 0]], "context": [["T", ["t."]]]}
    path = tmp_path / "h.json"
    path.write_text(json.dumps([record, dict(record, question="Other?")]))
    with pytest.raises(DataError, match=r"h\.json: record 1: question id 'h1' already appears at record 0"):
        load_benchmark("hotpotqa", path)


def test_one_passage_id_for_two_passages_names_both_records(tmp_path):
    corpus = write(tmp_path / "passages.jsonl", PASSAGES + [{"id": "p1", "title": "Drusk", "text": "Drusk is a town."}])
    with pytest.raises(DataError, match=r"passages\.jsonl: line 3: passage id 'p1' is also the id of a different "
                                        r"passage \(line 1\)"):
        load_corpus(corpus)
    retitled = write(tmp_path / "retitled.jsonl", PASSAGES + [{**PASSAGES[0], "text": "Ana Corvel was born in Velm."}])
    with pytest.raises(DataError, match=r"retitled\.jsonl: line 3: passage id 'p1' is also the id of a different"):
        load_corpus(retitled)  # the same title, another text: still another passage
    same = write(tmp_path / "same.jsonl", PASSAGES + [PASSAGES[0]])  # a repeated identical passage is kept once
    assert [p.id for p in load_corpus(same)] == ["p1", "p2"]


def test_unified_questions_take_the_passages_beside_them_or_say_what_is_missing(tmp_path):
    questions = write(tmp_path / "q.jsonl", [question("q1", ["p1"])])
    with pytest.raises(DataError, match=r"q\.jsonl: unified questions carry no contexts and there is no "
                                        r".*passages\.jsonl: name the corpus with --data.corpus"):
        load_benchmark("unified", questions)
    write(tmp_path / "passages.jsonl", PASSAGES)
    assert [p.id for p in load_benchmark("unified", questions).passages] == ["p1", "p2"]
