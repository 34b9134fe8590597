"""Every loader on small hand-written records, and on the real files in ../shared/data."""

import json

import pytest

from core.types import Passage, passage_id
from datamodules.loaders import DataConfig, load_benchmark, load_corpus, write_unified


def write(path, value, lines=False):
    path.write_text("\n".join(json.dumps(v) for v in value) if lines else json.dumps(value))
    return path


HOTPOT = {
    "_id": "h1", "question": "Where was the founder of Ostrel born?", "answer": "Drusk", "type": "bridge",
    "supporting_facts": [["Ostrel", 0], ["Ana Corvel", 1], ["Ostrel", 1]],
    "context": [["Ostrel", ["Ostrel is a brewery.", " It was founded by Ana Corvel."]],
                ["Ana Corvel", ["Ana Corvel is a brewer.", " She was born in Drusk."]],
                ["Vell", ["Vell is a river."]]],
}


def test_hotpotqa_record_gives_question_gold_in_order_and_context_corpus(tmp_path):
    bench = load_benchmark("hotpotqa", write(tmp_path / "q.json", [HOTPOT]))
    q = bench.questions[0]
    assert (q.id, q.answers, q.type) == ("h1", ["Drusk"], "bridge")
    assert q.gold_passage_ids == [passage_id("Ostrel", "Ostrel is a brewery. It was founded by Ana Corvel."),
                                  passage_id("Ana Corvel", "Ana Corvel is a brewer. She was born in Drusk.")]
    assert sorted(p.title for p in bench.passages) == ["Ana Corvel", "Ostrel", "Vell"]
    assert bench.passage_by_id()[q.gold_passage_ids[1]].sentences == ["Ana Corvel is a brewer.", "She was born in Drusk."]


def test_hotpotqa_with_title_to_sentences_corpus_matches_by_title_and_text(tmp_path):
    corpus = {t: s for t, s in HOTPOT["context"]} | {"Other": ["Something else."]}
    bench = load_benchmark("hotpotqa", write(tmp_path / "q.json", [HOTPOT]), write(tmp_path / "c.json", corpus))
    assert len(bench.passages) == 4
    assert all(pid in bench.passage_by_id() for pid in bench.questions[0].gold_passage_ids)


def test_2wiki_keeps_evidences_as_gold_triples(tmp_path):
    record = dict(HOTPOT, type="compositional", evidences=[["Ostrel", "founded by", "Ana Corvel"]])
    q = load_benchmark("2wiki", write(tmp_path / "q.jsonl", [record], lines=True)).questions[0]
    assert q.gold_triples == [["Ostrel", "founded by", "Ana Corvel"]]
    assert q.type == "compositional"


MUSIQUE = {
    "id": "2hop__1_2", "question": "Where was the founder of Ostrel born?", "answer": "Drusk",
    "answer_aliases": ["Drusk town"], "answerable": True,
    "paragraphs": [
        {"idx": 0, "title": "Vell", "paragraph_text": "Vell is a river.", "is_supporting": False},
        {"idx": 1, "title": "Ana Corvel", "paragraph_text": "Ana Corvel was born in Drusk.", "is_supporting": True},
        {"idx": 2, "title": "Ostrel", "paragraph_text": "Ostrel was founded by Ana Corvel.", "is_supporting": True},
    ],
    "question_decomposition": [
        {"id": 1, "question": "Ostrel >> founded by", "answer": "Ana Corvel", "paragraph_support_idx": 2},
        {"id": 2, "question": "#1 >> place of birth", "answer": "Drusk", "paragraph_support_idx": 1},
    ],
}


def test_musique_orders_gold_by_decomposition_and_keeps_aliases(tmp_path):
    q = load_benchmark("musique", write(tmp_path / "q.json", [MUSIQUE])).questions[0]
    assert q.answers == ["Drusk", "Drusk town"]
    assert q.type == "2hop"
    assert q.gold_passage_ids == [passage_id("Ostrel", "Ostrel was founded by Ana Corvel."),
                                  passage_id("Ana Corvel", "Ana Corvel was born in Drusk.")]
    assert q.decomposition == [{"question": "Ostrel >> founded by", "answer": "Ana Corvel"},
                               {"question": "#1 >> place of birth", "answer": "Drusk"}]


def test_musique_with_repeated_titles_in_hipporag_corpus_matches_title_and_text(tmp_path):
    corpus = [{"title": p["title"], "text": p["paragraph_text"]} for p in MUSIQUE["paragraphs"]]
    corpus.append({"title": "Ana Corvel", "text": "Ana Corvel (painter) was born in Lisk."})  # same title
    bench = load_benchmark("musique", write(tmp_path / "q.json", [MUSIQUE]), write(tmp_path / "c.json", corpus))
    assert len(bench.passages) == 4
    assert bench.passage_by_id()[bench.questions[0].gold_passage_ids[1]].text == "Ana Corvel was born in Drusk."


def test_ircot_reads_spans_and_supporting_contexts(tmp_path):
    record = {"question_id": "i1", "question_text": "Who founded Ostrel?",
              "answers_objects": [{"number": "", "spans": ["Ana Corvel"]}],
              "contexts": [{"id": "0", "title": "Ostrel", "paragraph_text": "Founded by Ana Corvel.", "is_supporting": True},
                           {"id": "1", "title": "Vell", "paragraph_text": "A river.", "is_supporting": False}]}
    bench = load_benchmark("ircot", write(tmp_path / "q.jsonl", [record, dict(record, question_id="i2")], lines=True))
    assert [q.id for q in bench.questions] == ["i1", "i2"]
    assert bench.questions[0].answers == ["Ana Corvel"]
    assert bench.questions[0].gold_passage_ids == [passage_id("Ostrel", "Founded by Ana Corvel.")]
    assert len(bench.passages) == 2  # the union of contexts, deduplicated


def test_plain_question_list_with_gold_titles_file(tmp_path):
    corpus = write(tmp_path / "c.json", [{"title": "Ostrel", "text": "A brewery."}, {"title": "Vell", "text": "A river."}])
    gold = write(tmp_path / "g.json", [{"question": "Who founded Ostrel?", "ground_truth": ["Ostrel"], "answer": ""}])
    bench = load_benchmark("plain", write(tmp_path / "q.json", ["Who founded Ostrel?"]), corpus, gold)
    assert bench.questions[0].gold_passage_ids == [passage_id("Ostrel", "A brewery.")]


def test_hipporag_layout_sniffs_the_question_format(tmp_path):
    corpus = write(tmp_path / "c.json", [{"title": p["title"], "text": p["paragraph_text"]} for p in MUSIQUE["paragraphs"]])
    bench = load_benchmark("hipporag", write(tmp_path / "q.json", [MUSIQUE]), corpus)
    assert bench.questions[0].type == "2hop" and len(bench.questions[0].gold_passage_ids) == 2


def test_unified_round_trip(tmp_path, capsys):
    out = write_unified(DataConfig("musique", str(write(tmp_path / "q.json", [MUSIQUE])), corpus=None).load(), str(tmp_path / "u"))
    assert out == tmp_path / "u" and capsys.readouterr().out == ""  # the caller reports, not the library
    original = load_benchmark("musique", tmp_path / "q.json")
    again = load_benchmark("unified", out / "questions.jsonl", out / "passages.jsonl")
    assert [q.to_dict() for q in again.questions] == [q.to_dict() for q in original.questions]
    assert [p.to_dict() for p in again.passages] == [p.to_dict() for p in original.passages]


def test_json_file_may_hold_json_lines(tmp_path):
    records = [{"title": "A", "text": "One."}, {"title": "B", "text": "Two."}]
    assert load_corpus(write(tmp_path / "c.json", records, lines=True)) == load_corpus(write(tmp_path / "d.json", records))


def test_passage_ids_are_stable_and_whitespace_insensitive():
    assert Passage.make("T", "a  b\n c").id == Passage.make(" T ", "a b c").id == passage_id("T", "a b c")
    assert Passage.make("T", "a b c").id != Passage.make("U", "a b c").id


def test_demo_data_is_rich_enough():
    bench = DataConfig().load()
    gold = {pid for q in bench.questions for pid in q.gold_passage_ids}
    hops = [len(q.gold_passage_ids) for q in bench.questions]
    assert len(bench.questions) >= 50
    assert min(hops) >= 2 and max(hops) == 4
    assert len(bench.passages) - len(gold) >= 50  # distractors
    assert all(q.answers and q.gold_triples for q in bench.questions)


# The real files, as published (counts from ../shared/data/README.md).
SHARED_CASES = [
    ("ircot", "hotpotqa/ircot_dev_500.jsonl", None, None, 500, 4858),
    ("hotpotqa", "hotpotqa/hipporag_train_100.json", "hotpotqa/hipporag_train_100_corpus.json", None, 100, 994),
    ("musique", "musique/hipporag_train_100.json", "musique/hipporag_train_100_corpus.json", None, 100, 1890),
    ("musique", "musique/kag_100.json", None, None, 100, 1839),
    ("plain", "2wiki/fastgraphrag_101_questions.json", "2wiki/hipporag_corpus_6119.json",
     "2wiki/fastgraphrag_101_gold_titles.json", 76, 6119),
    ("2wiki", "2wiki/hoprag_10.jsonl", None, None, 10, 99),
    ("hipporag", "hotpotqa/hipporag_train_100.json", "hotpotqa/hipporag_train_100_corpus.json", None, 100, 994),
]


@pytest.mark.integration
@pytest.mark.parametrize("fmt,questions,corpus,gold,n_questions,n_passages", SHARED_CASES)
def test_shared_data_loads_with_every_gold_passage_resolved(shared_data, fmt, questions, corpus, gold,
                                                            n_questions, n_passages):
    path = lambda p: str(shared_data / p) if p else None  # noqa: E731
    bench = load_benchmark(fmt, path(questions), path(corpus), path(gold))
    assert (len(bench.questions), len(bench.passages)) == (n_questions, n_passages)
    ids = bench.passage_by_id()
    assert all(2 <= len(q.gold_passage_ids) <= 4 and all(p in ids for p in q.gold_passage_ids) for q in bench.questions)
    assert len({q.id for q in bench.questions}) == n_questions


def test_offset_and_limit_select_a_slice_of_the_questions():
    every = [q.id for q in DataConfig().load().questions]
    assert [q.id for q in DataConfig(limit=3, offset=2).load().questions] == every[2:5]
    assert [q.id for q in DataConfig(offset=len(every) - 1).load().questions] == every[-1:]
