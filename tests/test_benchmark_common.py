"""benchmarks/common.py: committed per-question scores, and finishing a benchmark over several sittings."""

from dataclasses import replace

import pytest

import benchmarks.common as common
from benchmarks.common import commit_scores, committed_runs
from evaluation.config import parse_config
from evaluation.runner import evaluate
from evaluation.scores import read_scores


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.setattr(common, "RESULTS", tmp_path / "results")
    return tmp_path / "results"


def bm25(tmp_path, name, *extra):
    return parse_config(["--retriever", "bm25", "--index.cache_dir", str(tmp_path / "idx"),
                         "--output_dir", str(tmp_path / "runs" / name), *extra])


def test_a_committed_run_is_reused_only_for_its_config_its_inputs_and_all_its_questions(tmp_path, results):
    done, cut = bm25(tmp_path, "done"), bm25(tmp_path, "cut")
    evaluate(done, until=6)
    evaluate(cut, until=4)
    commit_scores("bench", {"done": done.output_dir, "cut": cut.output_dir})
    assert sorted(p.name for p in (results / "bench").iterdir()) == [
        "cut.jsonl.gz", "cut.run.json", "done.jsonl.gz", "done.run.json"]

    found = committed_runs("bench", {"done": done, "cut": cut}, 6)
    assert found == {"done": results / "bench" / "done.jsonl.gz"}  # "cut" scored 4 of the 6 questions
    assert committed_runs("bench", {"done": replace(done, top_k=3)}, 6) == {}  # another config
    assert committed_runs("bench", {"done": done}, 5) == {}  # not exactly the first 5 questions
    assert committed_runs("bench", {"missing": done}, 6) == {}

    # Committing again from the committed file itself keeps it, and drops what is not asked for.
    before = read_scores(found["done"]).scores
    commit_scores("bench", {"done": found["done"]})
    assert sorted(p.name for p in (results / "bench").iterdir()) == ["done.jsonl.gz", "done.run.json"]
    assert read_scores(results / "bench" / "done.jsonl.gz").scores == before
    assert committed_runs("bench", {"done": done}, 6) == found


def test_a_committed_run_over_changed_inputs_is_not_reused(tmp_path, results):
    questions = tmp_path / "questions.jsonl"
    config = bm25(tmp_path, "run")
    questions.write_text(open(config.data.questions).read())
    config = bm25(tmp_path, "run", "--data.questions", str(questions), "--data.corpus", str(config.data.corpus_file()))
    evaluate(config, until=3)
    commit_scores("bench", {"run": config.output_dir})
    assert committed_runs("bench", {"run": config}, 3)
    questions.write_text(questions.read_text() + "\n")  # same questions, other bytes: the digest says changed
    assert committed_runs("bench", {"run": config}, 3) == {}
    # kept as it was made: the config is checked, the inputs are not
    assert committed_runs("bench", {"run": config}, 3, inputs=False) == {"run": results / "bench" / "run.jsonl.gz"}
    assert committed_runs("bench", {"run": replace(config, top_k=3)}, 3, inputs=False) == {}


def test_the_machine_line_names_the_kernels_torch_dispatches_to(monkeypatch):
    monkeypatch.setattr(common.torch.backends.cpu, "get_cpu_capability", lambda: "AVX512")
    monkeypatch.setattr(common.torch, "get_num_threads", lambda: 3)
    assert ", AVX512 kernels, 3 torch threads, " in common.machine()
