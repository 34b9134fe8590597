"""prepare.py: unified data files and index building from the command line."""

import json

from datamodules.loaders import DataConfig
from evaluate import main as evaluate_main
from inference.retrievers import BM25Retriever
from prepare import main


def test_data_command_writes_unified_files_that_load_back(tmp_path, shared_data):
    out = tmp_path / "unified"
    assert main(["data", "--data.format", "musique", "--data.questions", str(shared_data / "musique/kag_100.json"),
                 "--data.corpus", "null", "--data.limit", "7", "--output_dir", str(out)]) == 0
    questions = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    assert len(questions) == 7 and all(q["gold_passage_ids"] and q["decomposition"] for q in questions)
    again = DataConfig("unified", str(out / "questions.jsonl"), str(out / "passages.jsonl")).load()
    assert [q.to_dict() for q in again.questions] == questions


def test_index_command_builds_a_cache_that_evaluate_reuses(tmp_path, monkeypatch):
    cache = tmp_path / "indexes"
    assert main(["index", "--retriever", "bm25", "--index.cache_dir", str(cache)]) == 0
    metas = list(cache.glob("bm25-*/meta.json"))
    assert len(metas) == 1 and json.loads(metas[0].read_text())["num_passages"] == len(DataConfig().load().passages)

    def no_rebuild(*args):
        raise AssertionError("the index was rebuilt")

    monkeypatch.setattr(BM25Retriever, "_build", no_rebuild)
    assert evaluate_main(["--retriever", "bm25", "--index.cache_dir", str(cache), "--output_dir", str(tmp_path / "e")]) == 0


def test_bad_input_exits_2_with_the_file_named(tmp_path, capsys):
    assert main(["data", "--data.format", "ircot", "--data.questions", str(tmp_path / "x.jsonl"),
                 "--output_dir", str(tmp_path / "o")]) == 2
    assert "x.jsonl: file does not exist" in capsys.readouterr().err
