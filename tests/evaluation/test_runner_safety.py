"""An evaluation run never loses or mislabels earlier results: overwrite only after the new run has
loaded, one writer per output folder, clear errors for corrupt records, settings checked where parsed."""

import json
import logging
import multiprocessing

import pytest
from conftest import save_tiny

from core.records import exclusive_output
from evaluate import main
from evaluation.config import parse_config
from evaluation.factory import build_method
from evaluation.runner import _steps
from inference.reader import ReadingMethod
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


def test_evaluate_keeps_a_kg_record_that_lacks_only_its_final_newline(tmp_path, kirag_args):
    log = tmp_path / "kg" / "triples.jsonl"
    log.write_bytes(log.read_bytes()[:-1])  # a hand edit trims the last byte: the newline
    trimmed = log.read_bytes()
    assert main(kirag_args + ["--output_dir", str(tmp_path / "run")]) == 0
    assert log.read_bytes() == trimmed  # a reader of the store writes nothing
    assert KGStore(tmp_path / "kg").passage_ids()[-1] == json.loads(trimmed.splitlines()[-1])["passage_id"]


def test_compare_reads_a_last_prediction_without_its_newline_and_changes_no_run(tmp_path):
    run = tmp_path / "run"
    assert main(BM25 + index(tmp_path) + ["--output_dir", str(run), "--data.limit", "4"]) == 0
    predictions = run / "predictions.jsonl"
    predictions.write_bytes(predictions.read_bytes()[:-1])
    before = files(run)
    assert main(["compare", str(run), str(run), "--output_dir", str(tmp_path / "cmp")]) == 0
    assert files(run) == before
    result = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    assert result["paired"][0]["difference"] == 0 and result["runs"][0]["questions"] == 4


def test_compare_into_a_file_is_refused_in_one_line(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(BM25 + index(tmp_path) + ["--output_dir", str(run), "--data.limit", "2"]) == 0
    (tmp_path / "cmp").write_text("x")
    assert main(["compare", str(run), "--output_dir", str(tmp_path / "cmp")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: {tmp_path / 'cmp'} is a file, not a folder: choose another output folder")


def tiny_lm_folder(make_tiny_lm, folder, context: int) -> str:
    lm = make_tiny_lm()
    lm.model.config.max_position_embeddings = context
    return save_tiny(lm.model, lm.tokenizer, folder)


@pytest.mark.parametrize("lm", ["short context", "missing"])
def test_an_overwrite_that_cannot_predict_deletes_nothing(tmp_path, capsys, make_tiny_lm, lm):
    """--overwrite removes the old results only once the new run has predicted its first step: an LM whose
    context cannot hold the reader's prompt, or that does not load, leaves them whole."""
    out = tmp_path / "run"
    assert main(BM25 + index(tmp_path) + ["--output_dir", str(out), "--data.limit", "4"]) == 0
    before = files(out)
    name = tiny_lm_folder(make_tiny_lm, tmp_path / "lm", 40) if lm == "short context" else str(tmp_path / "no-lm")
    assert main(BM25 + index(tmp_path) + ["--output_dir", str(out), "--data.limit", "4", "--reader.enabled", "true",
                                          "--lm.name", name, "--overwrite", "true"]) == 2
    err = capsys.readouterr().err
    assert ("more than the LM's context of 40 tokens" if lm == "short context" else "no-lm") in err
    assert files(out) == before


def test_resume_refuses_a_changed_kg_store_naming_it_and_accepts_one_that_grew(tmp_path, kirag_args, capsys):
    out = tmp_path / "run"
    args = kirag_args + ["--output_dir", str(out)]
    assert main(args) == 0
    log = tmp_path / "kg" / "triples.jsonl"
    original = log.read_bytes()
    with open(log, "a") as f:  # passages added since (extracted by this run or another writer): a resume is fine
        f.write(json.dumps({"passage_id": "new", "source": "llm", "rejected": 0, "triples": []}) + "\n")
    assert main(args) == 0
    log.write_bytes(original.replace(b"founded", b"started", 1))  # what the run read has changed
    assert main(args) == 2
    assert "made from other contents of kirag.kg" in capsys.readouterr().err


def test_resume_refuses_a_changed_implicit_corpus_naming_it(tmp_path, capsys):
    (tmp_path / "q.jsonl").write_text(json.dumps({"id": "a", "question": "Where was Ana Corvel born?",
                                                  "gold_passage_ids": ["p1"]}) + "\n")
    corpus = [{"id": "p1", "title": "Ana Corvel", "text": "Ana Corvel was born in Drusk."},
              {"id": "p2", "title": "Velm", "text": "Velm is a city."}]
    (tmp_path / "passages.jsonl").write_text("\n".join(json.dumps(p) for p in corpus) + "\n")
    args = BM25 + index(tmp_path) + ["--data.questions", str(tmp_path / "q.jsonl"), "--output_dir", str(tmp_path / "run")]
    assert main(args) == 0
    assert "data.corpus" in json.loads((tmp_path / "run" / "run.json").read_text())["inputs"]
    corpus[1]["text"] = "Velm is a town."
    (tmp_path / "passages.jsonl").write_text("\n".join(json.dumps(p) for p in corpus) + "\n")
    assert main(args) == 2
    assert "made from other contents of data.corpus" in capsys.readouterr().err


@pytest.mark.parametrize("flags, message", [
    (["--method", "dragin", "--mind.fixed_threshold", ".nan"], "mind.fixed_threshold must be a finite number, got nan"),
    (["--method", "mind", "--mind.params", "{params}"], "{params}: alpha must be a finite number, got nan"),
])
def test_a_nan_trigger_setting_is_refused_not_run_as_never_retrieving(tmp_path, capsys, flags, message):
    params = tmp_path / "trigger.json"
    params.write_text('{"alpha": NaN, "beta": 1, "gamma": 1, "delta": 0.2}')
    flags = [f.format(params=params) for f in flags]
    assert main(flags + index(tmp_path) + ["--output_dir", str(tmp_path / "run"), "--data.limit", "2"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == "error: " + message.format(params=params)
    assert not (tmp_path / "run" / "predictions.jsonl").exists()


@pytest.mark.parametrize("text, message", [
    ("", "the config file holds no settings (it is empty or only comments)"),
    ("# nothing here\n", "the config file holds no settings (it is empty or only comments)"),
    ("top_k: 3\ndata:\n  limit: 2\ntop_k: 5\n", "line 4: the key 'top_k' is given again (first at line 1)"),
    ("mind:\n  fixed_threshold: .nan\n", "mind.fixed_threshold must be a finite number, got nan"),
])
def test_an_empty_duplicated_or_non_finite_yaml_config_is_refused_naming_it(tmp_path, capsys, text, message):
    config = tmp_path / "eval.yaml"
    config.write_text(text)
    assert main(["--config", str(config), "--output_dir", str(tmp_path / "run")]) == 2
    assert message in capsys.readouterr().err and not (tmp_path / "run").exists()


@pytest.mark.parametrize(("method", "batched"), [("mind", False), ("rag", True)])
def test_behind_the_reader_mind_is_still_saved_question_by_question(tmp_path, make_tiny_lm, method, batched):
    """The runner saves a step at a time: behind the reader, MIND (unbatched) is still saved after each question,
    a batched method a batch at a time."""
    config = parse_config(BM25 + index(tmp_path) + ["--method", method, "--reader.enabled", "true", "--lm.name",
                                                    tiny_lm_folder(make_tiny_lm, tmp_path / "lm", 2048)])
    benchmark = config.data.load()
    built = build_method(config, benchmark)
    steps = [[q.id for q in batch] for batch, _ in _steps(built, benchmark.questions[:2], batch_size=32)]
    ids = [q.id for q in benchmark.questions[:2]]
    assert isinstance(built, ReadingMethod)
    assert steps == ([ids] if batched else [[i] for i in ids])
