"""Bad input fails with an error naming the file, the record or line, and what is wrong."""

import json

import pytest

from core.records import DataError
from datamodules.loaders import load_benchmark

RECORD = {"_id": "h1", "question": "Q?", "answer": "A", "supporting_facts": [["T", 0]],
          "context": [["T", ["Text one."]], ["U", ["Text two."]]]}


def error_of(tmp_path, fmt, questions, corpus=None, name="q.json"):
    path = tmp_path / name
    path.write_text(questions if isinstance(questions, str) else json.dumps(questions))
    corpus_path = None
    if corpus is not None:
        corpus_path = tmp_path / "c.json"
        corpus_path.write_text(corpus if isinstance(corpus, str) else json.dumps(corpus))
    with pytest.raises(DataError) as info:
        load_benchmark(fmt, path, corpus_path)
    return str(info.value)


def test_malformed_json_names_file_line_and_column(tmp_path):
    message = error_of(tmp_path, "hotpotqa", '[{"_id": "h1",\n "question": }]')
    assert "q.json" in message and "line 2 column" in message and "malformed JSON" in message


def test_malformed_jsonl_line_names_the_line(tmp_path):
    good = json.dumps(RECORD)
    message = error_of(tmp_path, "hotpotqa", f"{good}\n\n{good}\n{{not json\n", name="q.jsonl")
    assert "q.jsonl: line 4: malformed JSON Lines record" in message


def test_malformed_first_record_of_a_jsonl_file_names_its_line(tmp_path):
    good = json.dumps(RECORD)
    message = error_of(tmp_path, "hotpotqa", f"\n{good[:-1]}\n{good}\n", name="q.jsonl")
    assert "q.jsonl: line 2: malformed JSON Lines record" in message  # not the whole text's error, on line 3


def test_a_one_line_jsonl_corpus_is_one_passage_not_a_title_map(tmp_path):
    (tmp_path / "passages.jsonl").write_text(json.dumps({"id": "p1", "title": "T", "text": "hello"}) + "\n")
    (tmp_path / "q.jsonl").write_text(json.dumps({"id": "q1", "question": "x", "gold_passage_ids": ["p1"]}))
    benchmark = load_benchmark("unified", tmp_path / "q.jsonl")
    assert [(p.id, p.title, p.text) for p in benchmark.passages] == [("p1", "T", "hello")]
    assert benchmark.questions[0].gold_passage_ids == ["p1"]


def test_a_misspelt_unified_field_is_named_not_ignored(tmp_path):
    (tmp_path / "passages.jsonl").write_text(json.dumps({"id": "p1", "title": "T", "text": "hello"}) + "\n")
    message = error_of(tmp_path, "unified", json.dumps({"id": "q1", "question": "x", "gold_ids": ["p1"]}),
                       name="q.jsonl")
    assert message.startswith(f"{tmp_path / 'q.jsonl'}: line 1: unknown field 'gold_ids'; a unified question has id,")


def test_missing_field_names_record_and_field(tmp_path):
    record = {k: v for k, v in RECORD.items() if k != "answer"}
    assert error_of(tmp_path, "hotpotqa", [RECORD, record]).endswith("q.json: record 1: missing field 'answer'")


def test_field_of_wrong_type_is_named(tmp_path):
    message = error_of(tmp_path, "musique", [{"id": "x", "question": "Q", "answer": "A", "paragraphs": "oops"}])
    assert "record 0: field 'paragraphs' should be list, found str" in message


def test_missing_field_inside_a_paragraph_names_it(tmp_path):
    record = {"id": "x", "question": "Q", "answer": "A", "paragraphs": [{"title": "T"}]}
    assert "record 0, paragraph 0: missing field 'paragraph_text'" in error_of(tmp_path, "musique", [record])


def test_gold_passage_not_in_corpus_names_question_and_title(tmp_path):
    message = error_of(tmp_path, "hotpotqa", [RECORD], corpus=[{"title": "U", "text": "Text two."}])
    assert "q.json: record 0: gold passage 'T' of question h1 is not in the corpus" in message
    assert "c.json" in message


def test_unknown_gold_passage_id_in_unified_questions(tmp_path):
    corpus = [{"id": "p1", "title": "T", "text": "x"}]
    message = error_of(tmp_path, "unified", [{"id": "q1", "question": "Q", "gold_passage_ids": ["p1", "p9"]}], corpus)
    assert "record 0: gold passage id(s) p9 of question q1 not in the corpus" in message


def test_empty_corpus(tmp_path):
    assert "c.json: the corpus is empty" in error_of(tmp_path, "unified", [{"id": "q", "question": "Q"}], corpus=[])


def test_empty_file(tmp_path):
    assert error_of(tmp_path, "hotpotqa", "  \n").endswith("q.json: file is empty")


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="nope.json: file does not exist"):
        load_benchmark("hotpotqa", tmp_path / "nope.json")


def test_unknown_format_lists_the_known_ones(tmp_path):
    message = error_of(tmp_path, "hotpot", [RECORD])
    assert "unknown format 'hotpot'" in message and "musique" in message and "ircot" in message


def test_model_path_that_does_not_exist(tmp_path):
    from models.encoder import Encoder

    missing = tmp_path / "no-such-model"
    with pytest.raises(FileNotFoundError, match=str(missing)):
        Encoder(str(missing))


TWO_T = [{"title": "T", "text": "First passage titled T."}, {"title": "T", "text": "Second passage titled T."},
         {"title": "U", "text": "Text two."}]


def test_hotpotqa_gold_title_matching_two_passages_is_refused(tmp_path):
    # The supporting fact's text ("Text one.") is in neither corpus passage, and its title names two.
    message = error_of(tmp_path, "hotpotqa", [RECORD, dict(RECORD, _id="h2")], corpus=TWO_T)
    assert message == (f"{tmp_path / 'q.json'}: record 0: gold passage 'T' of question h1 matches 2 passages by title "
                       f"({tmp_path / 'c.json'})")


def test_plain_gold_titles_matching_two_passages_are_refused(tmp_path):
    questions, corpus, gold = tmp_path / "q.json", tmp_path / "c.json", tmp_path / "gold.json"
    questions.write_text(json.dumps(["Which U?", "Which T?"]))
    corpus.write_text(json.dumps(TWO_T))
    gold.write_text(json.dumps([{"question": "Which U?", "ground_truth": ["U"]},
                                {"question": "Which T?", "ground_truth": ["T"]}]))
    with pytest.raises(DataError) as info:
        load_benchmark("plain", questions, corpus, gold)
    message = str(info.value)
    assert message.startswith(f"{questions}: record 1: gold passage 'T' of question ")
    assert message.endswith(f" matches 2 passages by title ({corpus})")
    # inline titles (the plain object form) are refused the same way
    questions.write_text(json.dumps([{"question": "Which T?", "ground_truth": ["U", "T"]}]))
    expected = r"q\.json: record 0: gold passage 'T' of question \w+ matches 2 passages by title"
    with pytest.raises(DataError, match=expected):
        load_benchmark("plain", questions, corpus)
    # one passage of that title resolves: the title alone is enough when it is unambiguous
    corpus.write_text(json.dumps(TWO_T[1:]))
    benchmark = load_benchmark("plain", questions, corpus)
    by_id = {p.id: p for p in benchmark.passages}
    gold = [by_id[pid].text for pid in benchmark.questions[0].gold_passage_ids]
    assert gold == ["Text two.", "Second passage titled T."]


UNIFIED_CORPUS = json.dumps({"id": "p1", "title": "Drusk", "text": "Drusk is a town."}) + "\n"


@pytest.mark.parametrize("field, value, message", [
    ("answers", "Drusk", "field 'answers' should be a list of strings, found str"),
    ("gold_passage_ids", "p1", "field 'gold_passage_ids' should be a list of strings, found str"),
    ("answers", ["Drusk", 1852], "field 'answers' should be a list of strings, found a list holding int"),
    ("type", 2, "field 'type' should be str, found int"),
    ("gold_triples", [["Drusk", "is"]], "field 'gold_triples' should be a list of [head, relation, tail] strings"),
    ("decomposition", ["who?"], "field 'decomposition' should be a list of {question, answer} objects"),
])
def test_a_unified_field_of_the_wrong_type_is_refused_naming_file_line_and_field(tmp_path, field, value, message):
    (tmp_path / "passages.jsonl").write_text(UNIFIED_CORPUS)
    record = {"id": "q1", "question": "Where?", "gold_passage_ids": ["p1"], field: value}
    assert error_of(tmp_path, "unified", json.dumps(record), name="q.jsonl") == f"{tmp_path / 'q.jsonl'}: line 1: {message}"


@pytest.mark.parametrize("fmt, record, message", [
    ("musique", {"id": "m", "question": "Q", "answer": "A", "answer_aliases": "AB", "paragraphs": []},
     "record 0: field 'answer_aliases' should be a list of strings, found str"),
    ("ircot", {"question_id": "i", "question_text": "Q", "answers_objects": [{"spans": "A"}], "contexts": []},
     "record 0, answers_objects[0]: field 'spans' should be a list of strings, found str"),
    ("plain", {"question": "Q", "ground_truth": "Drusk"}, "record 0: field 'ground_truth' should be a list of strings"),
])
def test_a_published_field_of_the_wrong_type_is_refused_not_split_into_characters(tmp_path, fmt, record, message):
    assert message in error_of(tmp_path, fmt, [record])


@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_question_is_refused(tmp_path, text):
    (tmp_path / "passages.jsonl").write_text(UNIFIED_CORPUS)
    record = {"id": "q1", "question": text, "gold_passage_ids": ["p1"]}
    assert error_of(tmp_path, "unified", json.dumps(record), name="q.jsonl") == (
        f"{tmp_path / 'q.jsonl'}: line 1: question 'q1' has an empty question text")


def test_plain_format_on_unified_questions_says_which_format_they_look_like(tmp_path):
    record = {"id": "q1", "question": "Where?", "gold_passage_ids": ["p1"]}
    assert error_of(tmp_path, "plain", json.dumps(record), name="q.jsonl") == (
        f"{tmp_path / 'q.jsonl'}: plain questions carry no passages, and no corpus was given: name it with "
        "--data.corpus; its records look like unified questions: --data.format unified?")
