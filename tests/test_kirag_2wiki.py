"""benchmarks/kirag_2wiki.py: which questions it scores, the runs it makes, and a row of its table."""

import json

import pytest

from benchmarks import kirag_2wiki
from datamodules.loaders import DataConfig
from evaluation.scores import ScoredRun
from inference.kirag_ranking import RankingConfig


def test_questions_in_the_aligners_2wiki_training_file_are_left_out(tmp_path):
    demo = DataConfig().load()
    first, second = demo.questions[:2]
    trained_on = tmp_path / "hoprag.jsonl"
    trained_on.write_text(json.dumps({"question": "  " + second.question.upper() + " "}) + "\n")
    data, kept, left_out = kirag_2wiki.questions(DataConfig(), trained_on, tmp_path / "out")
    assert left_out == 1 and second.id not in {q.id for q in kept.questions}
    assert [q.id for q in data.load().questions] == [q.id for q in kept.questions]
    assert first.id == data.load().questions[0].id and len(data.load().passages) == len(demo.passages)


def test_the_baselines_run_at_kirags_budget_and_kirag_ranks_as_chosen(monkeypatch, tmp_path):
    monkeypatch.setattr(kirag_2wiki, "RUNS", tmp_path)
    chosen = RankingConfig(0.0, 1.0, 0.5)
    assert list(kirag_2wiki.configs(DataConfig(), "a.ckpt", chosen)) == ["kirag trained"]
    runs = kirag_2wiki.configs(DataConfig(), "a.ckpt", chosen, budget=14)
    assert list(runs) == ["kirag trained", "kirag base", "rag at budget", "hybrid"]
    assert [runs[k].top_k for k in ("rag at budget", "hybrid")] == [14, 14]
    assert runs["hybrid"].retriever == "hybrid" and runs["rag at budget"].retriever == "dense"
    assert all(runs[k].kirag.ranking == chosen for k in ("kirag trained", "kirag base"))
    assert runs["kirag trained"].aligner.name == "a.ckpt" and runs["kirag base"].aligner.name != "a.ckpt"
    assert not any(c.reader.enabled for c in runs.values())  # the file has no answers
    assert len({c.output_dir for c in runs.values()}) == 4
    over = kirag_2wiki.configs(DataConfig(), "a.ckpt", chosen, budget=14, retriever="hybrid")
    assert [k for k, c in over.items() if c.retriever == "hybrid"] == ["kirag trained", "kirag base", "hybrid"]
    assert over["rag at budget"] == runs["rag at budget"]
    assert over["kirag trained"].output_dir == runs["kirag trained"].output_dir + "_hybrid"


def test_a_row_gives_recall_at_2_and_5_and_the_share_with_every_gold_passage_in_the_top_5():
    scores = {"q1": {"recall@2": 0.5, "recall@5": 1.0, "passages_retrieved": 10.0, "retrieval_calls": 5.0},
              "q2": {"recall@2": 0.0, "recall@5": 0.5, "passages_retrieved": 12.0, "retrieval_calls": 5.0},
              "q3": {"recall@2": None, "recall@5": None, "passages_retrieved": 8.0, "retrieval_calls": 5.0}}
    run = ScoredRun("kirag", "c", scores, "")
    row = kirag_2wiki.row(run, run.summary())
    assert row["questions"] == 3 and row["all gold in top 5"] == "50.0"  # of the 2 questions with gold
    assert row["R@2"].startswith("25.0 (") and row["R@5"].startswith("75.0 (")
    assert row["passages retrieved"] == "10.00"


def test_only_kirag_runs_need_the_whole_kg_and_the_refusal_names_the_command(monkeypatch, tmp_path):
    monkeypatch.setattr(kirag_2wiki, "ROOT", tmp_path)
    monkeypatch.setattr(kirag_2wiki, "committed_runs", lambda name, configs, count: {})
    ran = []
    monkeypatch.setattr(kirag_2wiki, "evaluate", lambda config: ran.append(config.method))
    monkeypatch.setattr(kirag_2wiki, "read_run", lambda folder: folder)
    runs = kirag_2wiki.configs(DataConfig(), "a.ckpt", RankingConfig(), budget=5)
    kirag_2wiki.scored({k: runs[k] for k in ("rag at budget", "hybrid")}, 6)  # no KG needed
    assert ran == ["rag", "rag"]
    with pytest.raises(SystemExit, match="no triples in .*2wiki_fastgraphrag_6119: python prepare.py kg --config "
                                         "configs/kg/2wiki_fastgraphrag_6119.yaml"):
        kirag_2wiki.scored({"kirag trained": runs["kirag trained"]}, 6)
    assert ran == ["rag", "rag"]  # refused before running
