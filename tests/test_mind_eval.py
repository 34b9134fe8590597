"""benchmarks/mind_eval.py: how it chooses each trigger's operating point on validation, the random control's
seeds, the sweep it runs, and what it says in words against fixed interval."""

import argparse
import gzip
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks import mind_eval
from benchmarks.kirag_eval import Choices
from benchmarks.mind_eval import (DEV, METHODS, QUANTILES, RATES, SCALES, SEEDS, advance, against_fixed_interval,
                                  base_config, best_point, firing_rate, objective, seed_mean, sweep_configs)
from evaluation.scores import ScoredRun
from inference.kirag_ranking import RankingConfig
from inference.mind import MindSettings


def row(method, f1, calls, recall, diff=None, p=None, verdict=None):
    test = None if diff is None else {"difference": 100 * diff, "p (Holm)": p, "verdict": verdict}
    return {"method": method, "f1": f1, "retrieval_calls": calls, "recall@5": recall, "f1 test": test,
            "calls vs fixed interval": calls / 4.0}


def test_each_method_is_placed_against_fixed_interval_by_its_paired_test():
    rows = [row("fixed", 0.25, 4.0, 0.7), row("fewer calls, worse", 0.14, 1.0, 0.45, diff=-0.11, p=0.0004,
                                              verdict="behind"),
            row("fewer calls, same", 0.24, 2.0, 0.68, diff=-0.01, p=0.62, verdict="no significant difference")]
    triggers = [{"trigger": "calibrated", "held-out sentences": 80, "needing retrieval": 60, "AUROC": 0.5671,
                 "fires on": 0.15}]
    lines = against_fixed_interval(rows, triggers).strip().splitlines()
    assert lines[0] == "## Against fixed interval"
    assert lines[2] == ("- fewer calls, worse: 0.25× fixed interval's retrieval calls (1.00 against 4.00 a question), "
                        "at an F1 below its (14.0 against 25.0, -11.0 points, Holm-adjusted p < 0.001; recall@5 45.0 against 70.0).")
    assert "at an F1 not significantly different from its (24.0 against 25.0, -1.0 points, Holm-adjusted p = 0.62;" in lines[3]
    assert lines[4] == ("- The calibrated trigger ranks the held-out traced sentences at AUROC 0.567 (0.5 is chance); "
                        "at its threshold it fires on 15% of them, and 75% need retrieval.")


# --- choosing an operating point, the random control's seeds, the sweep ------------------------------------

def test_the_objective_prices_calls_or_caps_them():
    assert objective(0.40, 3.0, 0.01, None) == pytest.approx(0.37)
    assert objective(0.40, 3.0, 0.0, 2.5) == -math.inf and objective(0.40, 2.5, 0.0, 2.5) == 0.40


def test_the_best_point_trades_f1_for_calls_and_breaks_ties_by_fewer_calls():
    points = [{"run": "a", "f1": 0.30, "retrieval_calls": 4.0}, {"run": "b", "f1": 0.29, "retrieval_calls": 2.0},
              {"run": "c", "f1": 0.31, "retrieval_calls": 5.0}, {"run": "d", "f1": 0.27, "retrieval_calls": 0.0}]
    # F1 - 0.01·calls: a 0.26, b 0.27, c 0.26, d 0.27: b and d tie; d has fewer calls
    assert best_point(points, 0.01, None)["run"] == "d"
    assert best_point(points, 0.0, None)["run"] == "c"  # calls free: the best F1
    assert best_point(points, 0.0, 3.0)["run"] == "b"  # the best F1 within 3 calls


def test_random_seeds_average_per_question_over_the_seeds_that_scored_it():
    runs = [ScoredRun("r", "c", {"q1": {"f1": 0.0, "em": None}, "q2": {"f1": 1.0, "em": 1.0}}, ""),
            ScoredRun("r", "c", {"q1": {"f1": 0.5, "em": None}, "q2": {"f1": 0.0, "em": 0.0}}, ""),
            ScoredRun("r", "c", {"q1": {"f1": 1.0, "em": None}, "q2": {"f1": 0.5, "em": 1.0}}, "")]
    mean = seed_mean(runs, "random, 3 seeds")
    assert mean.method == "random, 3 seeds" and mean.corpus == "c"
    assert mean.scores == {"q1": {"f1": 0.5, "em": None}, "q2": {"f1": pytest.approx(0.5), "em": pytest.approx(2 / 3)}}


def test_the_firing_rate_counts_sentences_with_a_word_not_the_forced_answer(tmp_path):
    steps = [{"sentence": "A Ana", "retrieve": True}, {"sentence": " \n", "retrieve": False},
             {"sentence": "B Tom", "retrieve": False}, {"sentence": "So the answer is X", "retrieve": False,
                                                        "forced_answer": True}]
    records = [{"question_id": "q1", "passages": [], "trace": steps},
               {"question_id": "q2", "passages": [], "trace": [{"sentence": "C", "retrieve": True}]}]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert firing_rate(tmp_path) == pytest.approx(2 / 3)


def test_the_sweep_holds_every_point_of_every_trigger_with_labels_apart(tmp_path):
    base = base_config(DEV, "sentence")
    quantiles = [0.1 * (i + 1) for i in range(len(QUANTILES))]
    points = sweep_configs(base, Path(tmp_path / "trigger.json"), quantiles)
    families = [family for family, _, _ in points.values()]
    assert families.count("mind calibrated") == families.count("mind hand-set") == len(SCALES)
    assert families.count("dragin") == len(QUANTILES) and families.count("random") == len(RATES) * len(SEEDS)
    assert families.count("fixed interval") == 1
    configs = [config for _, _, config in points.values()]
    assert len({c.label() for c in configs}) == len(configs)  # every point named apart in tables
    assert all(c.reader.enabled and c.retriever == "bm25" and c.mind.retrieve_k == 3 for c in configs)
    assert [v for f, v, _ in points.values() if f == "dragin"] == quantiles
    # random triggering filters entities as calibrated MIND does: beside it, only the trigger differs
    assert {c.mind.params for f, _, c in points.values() if f in ("mind calibrated", "random")} == {
        str(tmp_path / "trigger.json")}
    without = sweep_configs(base, None, quantiles)  # refused calibration: no calibrated point
    assert "mind calibrated" not in [family for family, _, _ in without.values()]
    assert {c.mind.params for f, _, c in without.values() if f == "random"} == {None}


def test_each_ablation_names_a_setting_and_a_value_other_than_its_default():
    for _, setting, other in mind_eval.ABLATIONS:
        assert getattr(replace(MindSettings(), **{setting: other}), setting) != getattr(MindSettings(), setting)


def test_the_test_runs_put_fixed_interval_first_and_the_aligner_on_the_kirag_runs_alone():
    flat = {"choice.dragin.value": 0.1, "choice.mind hand-set.value": 0.25, "choice.mind calibrated.value": 4.0,
            "choice.mind calibrated.entity_signals": "extraction", "choice.mind calibrated.subquery": "refined",
            "choice.mind calibrated.fires on": 0.7812}
    args = argparse.Namespace(attention="sentence", questions=100, methods=list(METHODS), aligner=Path("a.ckpt"),
                              seeds=list(SEEDS))
    runs = mind_eval.test_run_configs(args, flat)
    assert list(runs) == ["fixed_interval", "dragin", "mind_hand_set", "mind_calibrated",
                          *(f"random_seed{s}" for s in SEEDS), "kirag_mind", "kirag"]
    assert [runs[k].method for k in ("kirag_mind", "kirag")] == ["kirag+mind", "kirag"]
    assert {k for k, c in runs.items() if c.aligner is not None and c.aligner.name == "a.ckpt"} == {"kirag_mind",
                                                                                                  "kirag"}
    assert runs["kirag_mind"].mind == runs["mind_calibrated"].mind  # the calibrated point, subquery included
    assert {runs[f"random_seed{s}"].mind.random_rate for s in SEEDS} == {0.781}
    # the control differs from the calibrated point in its trigger alone
    assert [replace(runs[f"random_seed{s}"].mind, random_rate=0.5, seed=0) for s in SEEDS] == [
        replace(runs["mind_calibrated"].mind, random_rate=0.5, seed=0)] * len(SEEDS)
    assert [runs[f"random_seed{s}"].mind.seed for s in SEEDS] == list(SEEDS)
    assert runs["random_seed0"].method == "random_trigger" and runs["mind_calibrated"].method == "mind"
    assert len({c.output_dir for c in runs.values()}) == len(runs)
    only = mind_eval.test_run_configs(argparse.Namespace(**{**vars(args), "methods": ["kirag"]}), flat)
    assert list(only) == ["fixed_interval", "kirag"]
    some = mind_eval.test_run_configs(argparse.Namespace(**{**vars(args), "seeds": [1]}), flat)
    assert [k for k in some if k.startswith("random")] == ["random_seed1"]
    assert runs["mind_calibrated"].mind.entity_selection == "threshold"  # chosen before the ablation: its default
    top = mind_eval.test_run_configs(args, {**flat, "choice.mind calibrated.entity_selection": "top"})
    assert {top[k].mind.entity_selection for k in ("mind_calibrated", "random_seed0", "kirag_mind")} == {"top"}


def test_the_kirag_runs_take_kirags_own_validation_choices_and_the_others_keep_bm25(monkeypatch, tmp_path):
    flat = {"choice.mind calibrated.value": 1.0, "choice.mind calibrated.fires on": 0.34}
    args = argparse.Namespace(attention="sentence", questions=100, methods=list(METHODS), aligner=tmp_path / "a.ckpt",
                              seeds=[0])
    assert mind_eval.kirag_choices(args.aligner) == {}  # no Aligner: nothing to look up
    args.aligner.write_bytes(b"a checkpoint")
    ranking = RankingConfig(triple_weight=1.0, retrieval_weight=1.0)
    monkeypatch.setattr(mind_eval.kirag_eval, "choices",
                        lambda shown: Choices(0.5, "hybrid", ranking, {}) if "a.ckpt" in shown else None)
    runs = mind_eval.test_run_configs(args, flat | mind_eval.kirag_choices(args.aligner))
    assert {k: (c.retriever, c.kirag.ranking) for k, c in runs.items() if k.startswith("kirag")} == {
        "kirag_mind": ("hybrid", ranking), "kirag": ("hybrid", ranking)}
    assert {c.retriever for k, c in runs.items() if not k.startswith("kirag")} == {"bm25"}
    assert all(c.kirag.ranking == RankingConfig() for k, c in runs.items() if not k.startswith("kirag"))


def test_a_sitting_runs_the_methods_named_and_keeps_the_committed_runs_of_the_others(monkeypatch):
    flat = {"choice.mind calibrated.value": 4.0, "choice.mind calibrated.entity_signals": "extraction",
            "choice.mind calibrated.subquery": "refined", "choice.mind calibrated.fires on": 0.78}
    args = argparse.Namespace(attention="sentence", questions=100, methods=["mind_calibrated", "random"],
                              aligner=Path("absent.ckpt"), seeds=[0], block=10)
    asked = []

    def committed(name, configs, questions, inputs=True):
        asked.append((sorted(configs), inputs))
        found = {"mind_calibrated", "kirag_mind", "kirag"} & set(configs)  # random_seed0 is not committed yet
        return {key: Path(f"{key}.jsonl.gz") for key in found}

    ran, written = [], []

    def advance(configs, questions, block, finished):
        for config in configs:
            ran.append(config)
            finished(config)

    monkeypatch.setattr(mind_eval, "choices", lambda attention: flat)
    monkeypatch.setattr(mind_eval, "committed_runs", committed)
    monkeypatch.setattr(mind_eval, "advance", advance)
    monkeypatch.setattr(mind_eval, "write_test", lambda args, flat, sources, kept, triggers: written.append(
        {"sources": sources, "kept": kept}))
    mind_eval.score_test(args, [])  # the Aligner is absent: the kirag runs are not named, so not needed
    assert asked == [(["fixed_interval", "mind_calibrated", "random_seed0"], True), (["kirag", "kirag_mind"], False)]
    assert [c.method for c in ran] == ["fixed_interval", "random_trigger"]
    # the table is written as each run ends, once fixed interval (the paired tests' baseline) is whole
    assert [list(w["sources"]) for w in written] == [["fixed_interval", "mind_calibrated", "kirag_mind", "kirag"],
                                                     ["fixed_interval", "mind_calibrated", "random_seed0",
                                                      "kirag_mind", "kirag"]]
    last = written[-1]
    assert last["sources"]["mind_calibrated"] == Path("mind_calibrated.jsonl.gz")
    assert last["sources"]["random_seed0"] == ran[1].output_dir
    assert last["kept"] == {"kirag_mind": Path("kirag_mind.jsonl.gz"), "kirag": Path("kirag.jsonl.gz")}


def test_a_test_with_every_run_committed_still_writes_its_table(monkeypatch):
    args = argparse.Namespace(attention="sentence", questions=100, methods=["mind_calibrated"],
                              aligner=Path("absent.ckpt"), seeds=[0], block=10)
    written = []
    flat = {"choice.mind calibrated.value": 1.0, "choice.mind calibrated.fires on": 0.34}
    monkeypatch.setattr(mind_eval, "choices", lambda attention: flat)
    monkeypatch.setattr(mind_eval, "committed_runs", lambda name, configs, questions, inputs=True: {
        key: Path(f"{key}.jsonl.gz") for key in configs if inputs})
    monkeypatch.setattr(mind_eval, "advance", lambda configs, questions, block, finished: pytest.fail("ran"))
    monkeypatch.setattr(mind_eval, "write_test", lambda args, flat, sources, kept, triggers: written.append(sources))
    mind_eval.score_test(args, [])
    assert written == [{"fixed_interval": Path("fixed_interval.jsonl.gz"),
                        "mind_calibrated": Path("mind_calibrated.jsonl.gz")}]


def test_methods_advance_side_by_side_in_blocks(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr("benchmarks.mind_eval.evaluate", lambda config, until: calls.append((config.name, until)))
    a, b = (replace(base_config(DEV, "sentence"), name=n, output_dir=str(tmp_path / n)) for n in "ab")
    advance([a, b], 25, 10, finished=lambda config: calls.append((config.name, "finished")))
    assert calls == [("a", 10), ("b", 10), ("a", 20), ("b", 20), ("a", 25), ("a", "finished"), ("b", 25),
                     ("b", "finished")]


def test_a_folder_of_another_run_stops_every_run_before_the_first(monkeypatch, tmp_path):
    calls, checked = [], []
    monkeypatch.setattr("benchmarks.mind_eval.evaluate", lambda config, until: calls.append(config.name))
    monkeypatch.setattr("evaluation.runner.made_by", lambda run_file, config: checked.append(config.name) or
                        config.name == "resumable")
    configs = [replace(base_config(DEV, "sentence"), name=n, output_dir=str(tmp_path / n))
               for n in ("fresh", "resumable", "other rate")]
    for config in configs[1:]:
        (tmp_path / config.name).mkdir()
        (tmp_path / config.name / "run.json").write_text("{}")
    with pytest.raises(SystemExit, match=r"other rate: holds runs of other settings or inputs; move them aside"):
        advance(configs, 20, 10)
    assert calls == [] and checked == ["resumable", "other rate"]  # a folder without a run is not asked about


def test_traces_are_restored_from_the_archive_built_on_and_archived_again(tmp_path):
    from benchmarks.mind_eval import sync_traces

    traces, archive = tmp_path / "runs" / "traces.jsonl", tmp_path / "data" / "traces.jsonl.gz"
    seen = []

    def build(lines):  # stands in for build_traces: resumes the file, appending what it lacks
        def run():
            seen.append(traces.read_text() if traces.is_file() else None)
            traces.parent.mkdir(parents=True, exist_ok=True)
            with traces.open("a") as f:
                f.writelines(lines)
            return {"written": len(lines)}
        return run

    assert sync_traces(traces, archive, build(['{"id": "q1"}\n'])) == {"written": 1}
    assert seen == [None] and gzip.decompress(archive.read_bytes()) == b'{"id": "q1"}\n'
    traces.unlink()  # a fresh checkout: runs/ is gone, the archive is committed
    sync_traces(traces, archive, build(['{"id": "q2"}\n']))
    assert seen[1] == '{"id": "q1"}\n'  # the builder resumed from the archive's traces, not from nothing
    assert gzip.decompress(archive.read_bytes()) == b'{"id": "q1"}\n{"id": "q2"}\n'


def test_a_committed_validation_run_is_reused_only_with_its_firing_rate(monkeypatch, tmp_path):
    (tmp_path / "mind_validation.json").write_text(json.dumps({"curve.fixed_interval.fires on": 1.0}))
    monkeypatch.setattr(mind_eval, "RESULTS", tmp_path)
    monkeypatch.setattr(mind_eval, "committed_runs", lambda name, configs, questions: {
        key: Path(f"{key}.jsonl.gz") for key in configs if key != "dragin_q0.5"})
    found, flat = mind_eval.reusable(dict.fromkeys(["fixed_interval", "dragin_q0.5", "random_r0.5_seed0"]), 20)
    # random_r0.5_seed0 is committed, but the table lacks its firing rate: it runs again
    assert found == {"fixed_interval": Path("fixed_interval.jsonl.gz")}
    assert flat == {"curve.fixed_interval.fires on": 1.0}


def test_the_label_rules_table_ranks_each_rule_by_max_s(monkeypatch, tmp_path):
    from datamodules.loaders import DataConfig

    questions = tmp_path / "hotpotqa.json"  # one question in HotpotQA's own format, its one passage gold
    questions.write_text(json.dumps([{"_id": "q1", "question": "Who founded Ostrel Brewing?", "answer": "Ana Corvel",
                                      "supporting_facts": [["Ostrel Brewing", 0]], "context": [
                                          ["Ostrel Brewing", ["Ostrel Brewing was founded by Ana Corvel in 1897."]]]}]))
    signals = {"content": [1.0], "attention": [1.0], "attention_in_sentence": [1.0]}
    sentences = [  # (max S, text, regenerated): by `change` the first and third need retrieval, by `claims` all three
        {**signals, "entropy": [0.9], "text": "It was Tomas Reyes", "regenerated": "It was Ana Corvel"},
        {**signals, "entropy": [0.1], "text": "It was Tomas Reyes", "regenerated": "It was Tomas Reyes"},
        {**signals, "entropy": [0.5], "text": "It was sold in 1901", "regenerated": "It was sold in 1897"},
        {**signals, "entropy": [0.3], "text": "It is old", "regenerated": "It is old"}]
    traces = tmp_path / "traces.jsonl"
    traces.write_text(json.dumps({"question_id": "q1", "entities": [],
                                  "sentences": [{**s, "label": 0} for s in sentences]}) + "\n")
    monkeypatch.setattr(mind_eval, "paths", lambda attention: (traces, tmp_path / "params.json"))
    monkeypatch.setattr(mind_eval, "TRAIN", DataConfig("hotpotqa", str(questions), None))
    rows = mind_eval.label_rules("sentence", 1)
    assert rows == [{"rule": "change (calibrated on)", "sentences": 4, "needing retrieval": 2, "AUROC of max S": 1.0},
                    {"rule": "claims", "sentences": 4, "needing retrieval": 3, "AUROC of max S": pytest.approx(2 / 3)}]


@pytest.mark.parametrize("questions, val_questions", [(101, 30), (0, 30), (100, 0)])
def test_test_questions_past_the_first_100_are_refused_before_anything_runs(monkeypatch, questions, val_questions):
    monkeypatch.setattr(mind_eval, "calibrate", lambda *a: pytest.fail("calibrated before the check"))
    args = argparse.Namespace(split="test", questions=questions, val_questions=val_questions)
    with pytest.raises(SystemExit, match="at most the first 100 questions of ircot_dev_500"):
        mind_eval.main(args)
