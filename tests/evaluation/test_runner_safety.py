"""An evaluation run never loses or mislabels earlier results: overwrite only after the new run has
loaded, one writer per output folder, clear errors for corrupt records, settings checked where parsed."""

import json
import logging
import multiprocessing

import pytest

from core.records import exclusive_output
from evaluate import main
from evaluation.config import parse_config
from evaluation.factory import build_method
from kg.extraction import extraction_notice
from kg.store import KGStore

BM25 = ["--retriever", "bm25"]


def index(tmp_path):
    return ["--index.cache_dir", str(tmp_path / "idx")]


def files(out):
    return {p.name: p.read_bytes() for p in out.iterdir() if not p.name.startswith(".")}


def test_a_failing_overwrite_leaves_the_old_results_whole(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(BM25 + index(tmp_path) + ["--output_dir", str(out)]) == 0
    before = files(out)
    assert {"run.json", "metrics.json", "predictions.jsonl", "metrics.md"} <= set(before)
    bad = ["--retriever", "dense", "--encoder.name", str(tmp_path / "no-such-model"), "--overwrite", "true"]
    assert main(bad + index(tmp_path) + ["--output_dir", str(out)]) == 2
    assert "no-such-model" in capsys.readouterr().err
    assert files(out) == before  # nothing changed: run.json still describes the bm25 results
    assert main(["compare", str(out), "--output_dir", str(tmp_path / "cmp")]) == 0
    assert "| rag (bm25) |" in (tmp_path / "cmp" / "comparison.md").read_text()


def test_overwrite_replaces_the_results_once_the_new_run_has_loaded(tmp_path):
    out = tmp_path / "run"
    assert main(BM25 + index(tmp_path) + ["--output_dir", str(out), "--data.limit", "5"]) == 0
    assert main(BM25 + index(tmp_path) + ["--output_dir", str(out), "--data.limit", "7", "--overwrite", "true"]) == 0
    assert len((out / "predictions.jsonl").read_text().splitlines()) == 7
    assert json.loads((out / "metrics.json").read_text())["questions"] == 7


def hold(folder, ready, release):
    with exclusive_output(folder, is_folder=True):
        ready.set()
        release.wait(60)


def test_a_second_run_into_the_same_folder_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    context = multiprocessing.get_context("spawn")
    ready, release = context.Event(), context.Event()
    holder = context.Process(target=hold, args=(out, ready, release))
    holder.start()
    try:
        assert ready.wait(60)
        assert main(BM25 + index(tmp_path) + ["--output_dir", str(out)]) == 2
        assert "another run is writing to" in capsys.readouterr().err
        assert not (out / "predictions.jsonl").exists() and not (out / "run.json").exists()
    finally:
        release.set()
        holder.join(60)


@pytest.mark.parametrize("name, content, message", [
    ("run.json", "{not json", r"run\.json: not a readable run record"),
    ("predictions.jsonl", '{"question_id": "q1"}\n', r"predictions\.jsonl: line 1: not a prediction record"),
])
def test_corrupt_run_files_name_the_file(tmp_path, capsys, name, content, message):
    out = tmp_path / "run"
    assert main(BM25 + index(tmp_path) + ["--output_dir", str(out), "--data.limit", "3"]) == 0
    (out / name).write_text(content)
    capsys.readouterr()
    assert main(BM25 + index(tmp_path) + ["--output_dir", str(out), "--data.limit", "3"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "error:" in err
    assert __import__("re").search(message, err)
    assert main(BM25 + index(tmp_path) + ["--output_dir", str(out), "--data.limit", "3", "--overwrite", "true"]) == 0


def test_an_output_dir_that_is_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "out").write_text("x")
    assert main(BM25 + ["--output_dir", str(tmp_path / "out")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


@pytest.mark.parametrize("flags, key", [
    (["--top_k", "0"], "top_k must be at least 1, got 0"),
    (["--batch_size", "0"], "batch_size must be at least 1, got 0"),
    (["--data.limit", "-1"], "data.limit must be at least 1, got -1"),
    (["--data.limit", "0"], "data.limit must be at least 1, got 0"),
    (["--data.offset", "-2"], "data.offset must be at least 0, got -2"),
    (["--reader.top_k", "0"], "reader.top_k must be at least 1, got 0"),
    (["--kirag.k0", "0"], "kirag.k0 must be at least 1, got 0"),
    (["--kirag.constructor_candidates", "0"], "kirag.constructor_candidates must be at least 1, got 0"),
    (["--kirag.constructor_candidates", "21"], "kirag.constructor_candidates must be at most num_candidates (20), got 21"),
    (["--kirag.ranking.text_weight", "-0.5"], "kirag.ranking.text_weight must be at least 0, got -0.5"),
    (["--kirag.ranking.triple_weight", "0"],
     "kirag.ranking.triple_weight and the other weights are all 0: at least one must be positive"),
    (["--kirag.ranking.passage_max_length", "0"], "kirag.ranking.passage_max_length must be at least 1, got 0"),
    (["--mind.retrieve_k", "-1"], "mind.retrieve_k must be at least 1, got -1"),
    (["--index.ef_search", "0"], "index.ef_search must be at least 1, got 0"),
    (["--encoder.batch_size", "0"], "encoder.batch_size must be at least 1, got 0"),
    (["--hybrid.rrf_k", "0"], "hybrid.rrf_k must be at least 1, got 0"),
    (["--hybrid.depth", "0"], "hybrid.depth must be at least 1, got 0"),
    (["--rerank.weight", "1.5"], r"rerank.weight must be in [0, 1], got 1.5"),
    (["--rerank.weight", "-0.1"], r"rerank.weight must be in [0, 1], got -0.1"),
    (["--rerank.depth", "0"], "rerank.depth must be at least 1, got 0"),
    (["--mdr.budget", "0"], "mdr.budget must be at least 1, got 0"),
    (["--mdr.beam", "0"], "mdr.beam must be at least 1, got 0"),
    (["--ircot.budget", "0"], "ircot.budget must be at least 1, got 0"),
    (["--ircot.k", "0"], "ircot.k must be at least 1, got 0"),
    (["--ircot.max_context", "0"], "ircot.max_context must be at least 1, got 0"),
    (["--method", "mdr"], "retriever must be 'dense' for method mdr (its path scores add inner products), got 'bm25'"),
])
def test_numbers_out_of_range_are_refused_naming_the_key(tmp_path, capsys, flags, key):
    assert main(flags + ["--output_dir", str(tmp_path / "run")]) == 2
    assert capsys.readouterr().err.strip() == f"error: {key}"
    assert not (tmp_path / "run").exists()


def test_a_run_without_questions_fails(tmp_path, capsys):
    (tmp_path / "q.json").write_text("[]")
    assert main(["--data.format", "hotpotqa", "--data.questions", str(tmp_path / "q.json"),
                 "--output_dir", str(tmp_path / "run")]) == 2
    assert "q.json: no questions" in capsys.readouterr().err
    assert main(["--data.offset", "1000", "--output_dir", str(tmp_path / "run")]) == 2
    assert "no questions from offset 1000" in capsys.readouterr().err


HOTPOT = {"_id": "h1", "question": "Where was Ana Corvel born?", "answer": "Drusk", "type": "bridge",
          "supporting_facts": [["Ana Corvel", 0]],
          "context": [["Ana Corvel", ["Ana Corvel was born in Drusk."]], ["Velm", ["Velm is a city."]]]}


def test_questions_without_a_corpus_are_searched_in_their_own_contexts(tmp_path):
    (tmp_path / "h.json").write_text(json.dumps([HOTPOT]))
    out = tmp_path / "run"
    assert main(BM25 + index(tmp_path) + ["--data.format", "hotpotqa", "--data.questions", str(tmp_path / "h.json"),
                                          "--output_dir", str(out)]) == 0
    assert json.loads((out / "metrics.json").read_text())["recall@2"] == 1.0


def test_questions_without_gold_are_counted_in_the_table(tmp_path):
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(q) for q in [
        {"id": "a", "question": "Where was Ana Corvel born?", "gold_passage_ids": ["p1"]},
        {"id": "b", "question": "Is Velm a city?", "gold_passage_ids": []}]) + "\n")
    (tmp_path / "passages.jsonl").write_text("\n".join(json.dumps(p) for p in [
        {"id": "p1", "title": "Ana Corvel", "text": "Ana Corvel was born in Drusk."},
        {"id": "p2", "title": "Velm", "text": "Velm is a city."}]) + "\n")
    out = tmp_path / "run"
    assert main(BM25 + index(tmp_path) + ["--data.questions", str(tmp_path / "q.jsonl"), "--output_dir", str(out)]) == 0
    table = [line for line in (out / "metrics.md").read_text().splitlines() if line.startswith("|")]
    header = [c.strip() for c in table[0].strip("|").split("|")]
    row = [c.strip() for c in table[2].strip("|").split("|")]
    assert (row[header.index("questions")], row[header.index("with gold passages")]) == ("2", "1")


def test_a_mistyped_kg_folder_says_what_extraction_will_cost(tmp_path, caplog):
    config = parse_config(["--method", "kirag", "--kirag.kg", str(tmp_path / "typo"), "--kirag.num_demos", "0",
                           "--lm.backend", "transformers", "--aligner.cache_dir", str(tmp_path / "emb")] + index(tmp_path))
    benchmark = config.data.load()
    assert len(benchmark.passages) == 186
    with caplog.at_level(logging.WARNING):
        build_method(config, benchmark)
    message = " ".join(r.getMessage() for r in caplog.records)
    # 186 passages at 14.5 s each (transformers, benchmarks/results/lm_backends.md): 2,697 s, 0.7 h
    assert "186 of 186 passages have no triples yet; the LM (transformers) extracts them at about 14 s" in message
    assert "about 0.7 h for all of them" in message and "the folder did not exist" in message
    store = KGStore(tmp_path / "typo")
    assert extraction_notice(store, benchmark.passages[:3], "vllm") == (
        f"KG store {store.folder}: 3 of 3 passages have no triples yet; the LM (vllm) extracts them")


def test_a_mistyped_kg_folder_without_extraction_is_an_error(tmp_path, capsys):
    assert main(["--method", "kirag", "--kirag.kg", str(tmp_path / "typo"), "--kirag.extract_missing", "false",
                 "--output_dir", str(tmp_path / "run")]) == 2
    assert "KG store" in capsys.readouterr().err and not (tmp_path / "typo").exists()
