"""benchmarks/kirag_eval.py evaluates each part on questions its Aligner never trained on."""

import json
from types import SimpleNamespace

import pytest

from benchmarks import kirag_eval
from datamodules.loaders import DataConfig


@pytest.fixture
def demo_part(monkeypatch, tmp_path):
    monkeypatch.setattr(kirag_eval, "RUNS", tmp_path, raising=False)
    monkeypatch.setitem(kirag_eval.PARTS, "demo", kirag_eval.Part(DataConfig(), "runs/kg/demo", "configs/kg/demo.yaml",
                                                                   "demo", "the demo"))
    return "demo"


def aligner_data(test_ids=None, trained=(), validated=()):
    """What evaluated_questions reads of an AlignerDataModule."""
    record = lambda qid: SimpleNamespace(question_id=qid)  # noqa: E731
    return SimpleNamespace(test_ids=test_ids or {}, train_records=[record(q) for q in trained],
                           val_records=[record(q) for q in validated])


def question_ids(data: DataConfig) -> list[str]:
    return [q.id for q in data.load().questions]


def test_a_dataset_the_aligner_trained_on_is_evaluated_on_its_test_split(demo_part):
    data = aligner_data({"demo": ["demo-005", "demo-002"], "other": ["x"]}, trained=["demo-001"])
    assert question_ids(kirag_eval.evaluated_questions(demo_part, data, unseen_questions=100)) == ["demo-002", "demo-005"]


def test_test_questions_outside_what_the_part_loads_are_refused(demo_part, monkeypatch):
    monkeypatch.setitem(kirag_eval.PARTS, "demo", kirag_eval.Part(DataConfig(limit=3), "runs/kg/demo",
                                                                   "configs/kg/demo.yaml", "demo", "the demo"))
    data = aligner_data({"demo": ["demo-002", "demo-005"]})
    with pytest.raises(SystemExit, match="demo: 1 of the 2 test questions of demo are not among the 3"):
        kirag_eval.evaluated_questions(demo_part, data, unseen_questions=100)


@pytest.mark.integration
@pytest.mark.parametrize(("part", "passages"), [("hotpotqa_ircot", 1000), ("hotpotqa_ircot_full", 4858)])
def test_the_ircot_test_split_is_evaluated_over_the_corpus_its_kg_covers(shared_data, monkeypatch, tmp_path, part,
                                                                         passages):
    """ircot's corpus is its questions' contexts: the test split (the first 100) keeps those 1,000 passages
    (configs/kg/hotpotqa_ircot_dev_100.yaml) in `hotpotqa_ircot`, and all 500 questions' 4,858
    (configs/kg/hotpotqa_ircot_dev_500.yaml) in `hotpotqa_ircot_full`."""
    monkeypatch.setattr(kirag_eval, "RUNS", tmp_path, raising=False)
    first = [q.id for q in kirag_eval.IRCOT.load().questions]
    evaluated = kirag_eval.evaluated_questions(part, aligner_data({"hotpotqa_ircot_dev_100": first}), 100)
    benchmark = evaluated.load()
    assert [q.id for q in benchmark.questions] == first and len(benchmark.passages) == passages


def test_a_dataset_the_aligner_never_saw_is_evaluated_on_its_first_questions(demo_part):
    data = aligner_data({"other": ["x"]}, trained=["y"], validated=["z"])
    evaluated = kirag_eval.evaluated_questions(demo_part, data, unseen_questions=3)
    assert question_ids(evaluated) == ["demo-001", "demo-002", "demo-003"]
    assert len(evaluated.load().passages) == len(DataConfig().load().passages)  # the whole corpus stays


@pytest.mark.parametrize("data", [aligner_data(trained=["demo-002"]), aligner_data(validated=["demo-002"]),
                                  aligner_data({"other": ["demo-002"]})], ids=["trained", "validated", "test"])
def test_first_questions_the_aligner_has_seen_are_refused(demo_part, data):
    with pytest.raises(SystemExit, match="demo: 1 of the first 3 questions .* demo-002"):
        kirag_eval.evaluated_questions(demo_part, data, unseen_questions=3)


def test_only_the_budget_rag_goes_without_the_reader_whose_answers_would_be_rags(demo_part):
    runs = kirag_eval.configs(demo_part, DataConfig(), constructor_questions=None, budget=15)
    assert runs["rag at budget"].top_k == 15 and runs["rag at budget"].index.type == "flat"  # exact: rag's top 3 first
    assert runs["rag"].reader.top_k == 3 < runs["rag"].top_k
    assert [key for key, config in runs.items() if not config.reader.enabled] == ["rag at budget"]


def test_parts_not_rerun_are_kept_from_the_last_results_with_their_own_checkpoint(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(kirag_eval, "RESULTS", tmp_path)
    sections = {p: f"## {p}\n\nAligner: `a` ({p})\n\n### sub\n\n| a |\n|---|\n| 1 |\n" for p in ("musique", "hotpotqa")}
    (tmp_path / "kirag_eval.md").write_text("# title\n\nheader\n\n" + "\n".join(sections.values()))
    figures = {"musique.questions": "q", "musique.aligner": "`a` (1)", "musique.all.rag.em": 2.0,
               "hotpotqa.questions": "q", "hotpotqa.aligner": "`a` (2)", "hotpotqa.x": 1.0}
    (tmp_path / "kirag_eval.json").write_text(json.dumps({"setup": "s"} | figures))

    kept, flat = kirag_eval.kept_parts(rerun=["hotpotqa", "hotpotqa_ircot"])
    assert kept == {"musique": sections["musique"]}  # byte for byte, its subsections included
    assert flat == {"musique.questions": "q", "musique.aligner": "`a` (1)", "musique.all.rag.em": 2.0}
    assert "musique kept from the last results (Aligner: `a` (1))" in capsys.readouterr().out
    (tmp_path / "kirag_eval.json").unlink()
    assert kirag_eval.kept_parts(rerun=[]) == ({}, {})
