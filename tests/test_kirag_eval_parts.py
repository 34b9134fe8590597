"""benchmarks/kirag_eval.py: test questions the Aligner never trained on, choices on validation ones,
and tables that its committed per-question scores reproduce."""

import json
import re
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks import kirag_eval
from benchmarks.common import read_rows
from datamodules.loaders import DataConfig
from evaluation.report import significance
from evaluation.scores import read_scores
from evaluation.stats import paired_test
from inference.kirag_ranking import RankingConfig
from kg.store import KGStore


def demo(data: DataConfig = DataConfig(), questions: str = "demo") -> kirag_eval.Part:
    return kirag_eval.Part(data, "runs/kg/demo", "configs/kg/demo.yaml", "demo", "demo", questions, "the demo")


@pytest.fixture
def demo_part(monkeypatch, tmp_path):
    monkeypatch.setattr(kirag_eval, "RUNS", tmp_path, raising=False)
    monkeypatch.setitem(kirag_eval.PARTS, "demo", demo())
    return "demo"


def aligner_data(test_ids=None, trained=(), validated=()):
    """What held_out reads of an AlignerDataModule."""
    record = lambda qid: SimpleNamespace(question_id=qid)  # noqa: E731
    return SimpleNamespace(test_ids=test_ids or {}, train_records=[record(q) for q in trained],
                           val_records=[record(q) for q in validated], val_record_datasets=["demo"] * len(validated))


def covered_kg(folder) -> str:
    """A KG store that covers every demo passage (with no triples: covered is all the KG check asks)."""
    store = KGStore(folder)
    for passage in DataConfig().load().passages:
        store.add(passage.id, [])
    return str(folder)


def question_ids(data: DataConfig) -> list[str]:
    return [q.id for q in data.load().questions]


def test_a_dataset_the_aligner_trained_on_is_evaluated_on_its_test_split(demo_part):
    data = aligner_data({"demo": ["demo-005", "demo-002"], "other": ["x"]}, trained=["demo-001"])
    assert question_ids(kirag_eval.held_out(demo_part, data, "test", 100)) == ["demo-002", "demo-005"]


def test_choices_are_made_on_the_aligners_validation_questions(demo_part):
    data = aligner_data({"demo": ["demo-005"]}, trained=["demo-001"], validated=["demo-004", "demo-003", "demo-004"])
    validation = kirag_eval.held_out(demo_part, data, "validation", 100)
    assert question_ids(validation) == ["demo-003", "demo-004"]
    assert len(validation.load().passages) == len(DataConfig().load().passages)  # the whole corpus stays
    with pytest.raises(SystemExit, match="no validation questions of demo"):
        kirag_eval.held_out(demo_part, aligner_data({"demo": ["demo-005"]}), "validation", 100)


def test_test_questions_outside_what_the_part_loads_are_refused(demo_part, monkeypatch):
    monkeypatch.setitem(kirag_eval.PARTS, "demo", demo(DataConfig(limit=3)))
    data = aligner_data({"demo": ["demo-002", "demo-005"]})
    with pytest.raises(SystemExit, match="demo: 1 of the 2 test questions of the Aligner's data are not among the 3"):
        kirag_eval.held_out(demo_part, data, "test", 100)


def test_a_dataset_the_aligner_never_saw_is_evaluated_on_its_first_questions(demo_part):
    data = aligner_data({"other": ["x"]}, trained=["y"], validated=["z"])
    evaluated = kirag_eval.held_out(demo_part, data, "test", unseen_questions=3)
    assert question_ids(evaluated) == ["demo-001", "demo-002", "demo-003"]


@pytest.mark.parametrize("data", [aligner_data(trained=["demo-002"]), aligner_data(validated=["demo-002"]),
                                  aligner_data({"other": ["demo-002"]})], ids=["trained", "validated", "test"])
def test_first_questions_the_aligner_has_seen_are_refused(demo_part, data):
    with pytest.raises(SystemExit, match="demo: 1 of the first 3 questions .* demo-002"):
        kirag_eval.held_out(demo_part, data, "test", unseen_questions=3)


def test_a_later_parts_missing_kg_stops_the_test_before_any_part_runs(demo_part, monkeypatch, tmp_path):
    monkeypatch.setitem(kirag_eval.PARTS, "demo", replace(demo(), kg=covered_kg(tmp_path / "kg")))
    monkeypatch.setitem(kirag_eval.PARTS, "later", replace(demo(), kg=str(tmp_path / "none"), kg_config="later.yaml"))
    monkeypatch.setattr(kirag_eval, "parse_args", lambda parser: parser.parse_args())  # no shared data needed
    monkeypatch.setattr(kirag_eval, "trained_aligner", lambda path, runs: (path, tmp_path, "a"))
    monkeypatch.setattr(kirag_eval, "trained_datamodule", lambda path: aligner_data({"other": ["x"]}))
    monkeypatch.setattr(kirag_eval, "choices", lambda aligner: kirag_eval.Choices(0.5, "dense", RankingConfig(), {}))
    ran = []
    monkeypatch.setattr(kirag_eval, "test_part", lambda part, *rest: ran.append(part))
    monkeypatch.setattr(sys, "argv", ["kirag_eval", "--split", "test", "--parts", "demo", "later"])
    with pytest.raises(SystemExit, match=r"later: (\d+) of the \1 passages have no triples .*later\.yaml"):
        kirag_eval.main()
    assert ran == []
    monkeypatch.setitem(kirag_eval.PARTS, "later", kirag_eval.PARTS["demo"])  # its KG there too: both pass
    assert list(kirag_eval.checked(["demo", "later"], aligner_data({"other": ["x"]}), "test", 100)) == ["demo", "later"]


@pytest.mark.parametrize("held", ["kirag trained", "hybrid"])
def test_a_folder_of_another_run_stops_the_part_before_that_run_and_every_later_one(demo_part, monkeypatch, held):
    ran = []
    monkeypatch.setattr(kirag_eval, "evaluate", lambda config: ran.append(config.name) or {"passages_retrieved": 15})
    folder = kirag_eval.configs(demo_part, DataConfig(), "test", "a.ckpt", budget=15, weight=0.5)[held].output_dir
    monkeypatch.setattr("evaluation.runner.made_by", lambda run_file, config: config.output_dir != folder)
    for config in kirag_eval.configs(demo_part, DataConfig(), "test", "a.ckpt", budget=15, weight=0.5).values():
        Path(config.output_dir).mkdir(parents=True)
        (Path(config.output_dir) / "run.json").write_text("{}")
    with pytest.raises(SystemExit, match=rf"^{re.escape(folder)}: holds runs of other settings or inputs"):
        kirag_eval.run_all(demo_part, DataConfig(), "test", "a.ckpt", weight=0.5)
    assert ran == ([] if held == "kirag trained" else ["kirag aligner-only, trained"])  # the budget's run alone


@pytest.mark.parametrize("committed", [set(), {"kirag trained", "hybrid", "ircot"}, {"hybrid"}])
def test_on_test_runs_committed_by_the_same_config_are_read_back_not_run(demo_part, monkeypatch, tmp_path, committed):
    ran, read = [], []
    monkeypatch.setattr(kirag_eval, "evaluate", lambda config: ran.append(config.name) or {"passages_retrieved": 15})
    scores = {key: tmp_path / f"{key}.jsonl.gz" for key in committed}
    monkeypatch.setattr(kirag_eval, "committed_runs", lambda name, runs, questions: {
        key: scores[key] for key in runs if key in scores and name == f"kirag_eval/{demo_part}"
        and questions == len(question_ids(DataConfig()))})
    monkeypatch.setattr(kirag_eval, "read_run", lambda source: read.append(source) or SimpleNamespace(
        summary=lambda: {"passages_retrieved": 14.6}))
    runs, budget = kirag_eval.run_all(demo_part, DataConfig(), "test", "a.ckpt", weight=0.5)
    configs = kirag_eval.configs(demo_part, DataConfig(), "test", "a.ckpt", budget=15, weight=0.5)
    assert budget == 15 and list(runs) == list(configs)  # the committed budget run's 14.6 passages round to 15
    budget_run = [] if "kirag trained" in committed else [configs["kirag trained"].name]  # then read back in order
    assert ran == budget_run + [c.name for key, c in configs.items() if key not in committed]
    assert read[-len(configs):] == [scores.get(key) or c.output_dir for key, c in configs.items()]


def test_every_baseline_gets_kirags_budget_and_the_reader_but_rag_at_budget(demo_part):
    runs = kirag_eval.configs(demo_part, DataConfig(), "test", "a.ckpt", budget=15, weight=0.25)
    assert list(runs) == ["rag", "rag at budget", "hybrid", "mdr", "ircot", "rerank", "kirag base", "kirag trained",
                          "kirag constructor"]
    assert runs["rag at budget"].top_k == runs["hybrid"].top_k == 15 and runs["rag at budget"].index.type == "flat"
    assert runs["mdr"].mdr.budget == runs["ircot"].ircot.budget == 15 and runs["hybrid"].retriever == "hybrid"
    assert runs["rerank"].rerank.weight == 0.25 and runs["rerank"].aligner.name == "a.ckpt"
    assert [key for key, config in runs.items() if not config.reader.enabled] == ["rag at budget"]


def test_validation_tries_every_rerank_weight_and_constructor_without_the_reader(demo_part):
    runs = kirag_eval.configs(demo_part, DataConfig(), "validation", "a.ckpt", budget=15)
    assert [c.rerank.weight for k, c in runs.items() if k.startswith("rerank")] == list(kirag_eval.WEIGHTS)
    assert not any(c.reader.enabled for c in runs.values())
    variants = {k: (c.kirag.constructor, c.kirag.constructor_candidates, c.kirag.stop) for k, c in runs.items()
                if k in kirag_eval.CONSTRUCTORS}
    assert variants == {"constructor": (True, None, "constructor"), "constructor top 5": (True, 5, "constructor"),
                        "constructor top 5, answer stop": (True, 5, "answer_in_chain")}
    assert runs["kirag trained"].kirag.constructor is False


def test_the_test_runs_the_constructor_variant_chosen_on_validation(demo_part):
    runs = kirag_eval.configs(demo_part, DataConfig(), "test", "a.ckpt", budget=15, weight=0.25,
                              constructor={"constructor_candidates": 5, "stop": "answer_in_chain"})
    chosen = runs["kirag constructor"].kirag
    assert (chosen.constructor, chosen.constructor_candidates, chosen.stop) == (True, 5, "answer_in_chain")
    assert not any(k in kirag_eval.CONSTRUCTORS for k in runs)  # on test only the chosen one


def test_kirags_loops_search_with_the_chosen_retriever_and_keep_their_own_runs(demo_part):
    dense = kirag_eval.configs(demo_part, DataConfig(), "test", "a.ckpt", budget=15, weight=0.25)
    hybrid = kirag_eval.configs(demo_part, DataConfig(), "test", "a.ckpt", budget=15, weight=0.25, retriever="hybrid")
    kirag = [k for k, c in hybrid.items() if c.method == "kirag"]
    assert kirag == ["kirag base", "kirag trained", "kirag constructor"]
    assert all(hybrid[k].retriever == "hybrid" and dense[k].retriever == "dense" for k in kirag)
    assert all(hybrid[k] == dense[k] for k in hybrid if k not in kirag)  # the baselines do not change
    assert all(hybrid[k].output_dir == dense[k].output_dir + "_hybrid" for k in kirag)
    assert hybrid["kirag trained"].name == "kirag aligner-only, trained, hybrid retrieval"
    assert dense["kirag trained"].name == "kirag aligner-only, trained"  # the dense runs keep their names and folders
    validation = kirag_eval.configs(demo_part, DataConfig(), "validation", "a.ckpt", budget=15, retriever="hybrid")
    assert all(validation[k].retriever == "hybrid" for k in kirag_eval.CONSTRUCTORS)  # the Constructor over it too
    assert kirag_eval.constructor_text({}) == "the paper's"


def test_runs_that_do_not_read_the_kg_are_shared_by_parts_of_the_same_questions(demo_part, monkeypatch):
    monkeypatch.setitem(kirag_eval.PARTS, "demo_own", demo())
    mine = kirag_eval.configs(demo_part, DataConfig(), "test", "a.ckpt", budget=15, weight=0.5)
    own = kirag_eval.configs("demo_own", DataConfig(), "test", "a.ckpt", budget=15, weight=0.5)
    shared = [k for k in mine if mine[k].output_dir == own[k].output_dir]
    assert shared == ["rag", "rag at budget", "hybrid", "mdr", "ircot", "rerank"]
    assert all(mine[k] == own[k] for k in shared)  # the same config: the second part reads the first's runs back
    # a part whose KG gives KiRAG another budget gets its own budget-matched runs, not the other part's
    other = kirag_eval.configs("demo_own", DataConfig(), "test", "a.ckpt", budget=12, weight=0.5)
    assert [k for k in mine if mine[k].output_dir == other[k].output_dir] == ["rag", "rerank"]
    assert other["ircot"].output_dir.endswith("ircot_12") and other["ircot"].ircot.budget == 12


def test_the_test_split_needs_choices_made_on_validation_for_the_same_checkpoint(monkeypatch, tmp_path):
    monkeypatch.setattr(kirag_eval, "RESULTS", tmp_path)
    with pytest.raises(SystemExit, match="run `python -m benchmarks.kirag_eval --split validation` first"):
        kirag_eval.choices("`a` (1)")
    made = {"aligner": "`a` (1)", "choice.rerank.weight": 0.75}
    (tmp_path / "kirag_validation.json").write_text(json.dumps(made))
    with pytest.raises(SystemExit, match="KiRAG.s validation choices hold no retriever, ranking or Constructor"):
        kirag_eval.choices("`a` (1)")
    made |= {"choice.ranking.triple_weight": 1.0, "choice.ranking.retrieval_weight": 0.5,
             "choice.ranking.text_weight": 0.0, "choice.constructor.variant": "constructor top 5"}
    (tmp_path / "kirag_validation.json").write_text(json.dumps(made))
    with pytest.raises(SystemExit, match="hold no retriever"):  # made before KiRAG's retriever was a choice
        kirag_eval.choices("`a` (1)")
    (tmp_path / "kirag_validation.json").write_text(json.dumps(made | {"choice.kirag.retriever": "hybrid"}))
    assert kirag_eval.choices("`a` (1)") == kirag_eval.Choices(0.75, "hybrid", RankingConfig(1.0, 0.5, 0.0),
                                                               {"constructor_candidates": 5})  # before text_query
    made |= {"choice.kirag.retriever": "hybrid", "choice.ranking.text_weight": 0.5,
             "choice.ranking.text_query": "steps"}
    (tmp_path / "kirag_validation.json").write_text(json.dumps(made))
    assert kirag_eval.choices("`a` (1)").ranking == RankingConfig(1.0, 0.5, 0.5, text_query="steps")
    with pytest.raises(SystemExit, match="made for `a` \\(1\\), not `a` \\(2\\)"):
        kirag_eval.choices("`a` (2)")


def test_kirag_runs_rank_by_the_chosen_weights_and_keep_text_scores_for_the_sweep(demo_part):
    chosen = RankingConfig(0.5, 1.0, 0.5)
    runs = kirag_eval.configs(demo_part, DataConfig(), "test", "a.ckpt", budget=15, weight=0.25, ranking=chosen)
    kirag = [c for c in runs.values() if c.method == "kirag"]
    assert len(kirag) == 3 and all(c.kirag.ranking == replace(chosen, score_text=True) for c in kirag)
    validation = kirag_eval.configs(demo_part, DataConfig(), "validation", "a.ckpt")
    assert validation["kirag trained"].kirag.ranking == RankingConfig(score_text=True)  # the paper's rule, swept after
    assert kirag_eval.RANKINGS[0] == RankingConfig() and len(kirag_eval.RANKINGS) == 26
    weights = {(r.triple_weight, r.retrieval_weight, r.text_weight) for r in kirag_eval.RANKINGS}
    assert len(weights) == 26  # every weighting of {0, 0.5, 1} but all-zero, the paper's first; multiples tie
    assert [replace(r, text_query="question") for r in kirag_eval.STEP_RANKINGS] == [
        r for r in kirag_eval.RANKINGS if r.text_weight > 0] and {r.text_query for r in kirag_eval.STEP_RANKINGS} == {
        "steps"}


def test_a_table_of_some_parts_drops_the_other_parts_committed_scores(demo_part, monkeypatch, tmp_path):
    monkeypatch.setattr(kirag_eval, "RESULTS", tmp_path)
    for part in ("demo", "musique"):
        (tmp_path / "kirag_eval" / part).mkdir(parents=True)
        (tmp_path / "kirag_eval" / part / "rag.jsonl.gz").write_bytes(b"scores")
    unscored = kirag_eval.drop_unscored(["demo"])
    assert "demo" not in unscored and "musique" in unscored and len(unscored) == len(kirag_eval.PARTS) - 1
    assert [p.name for p in (tmp_path / "kirag_eval").iterdir()] == ["demo"]


def test_the_committed_p_values_are_recomputed_from_the_committed_scores():
    results = kirag_eval.RESULTS / "kirag_eval.json"
    if not results.is_file():
        pytest.skip("no committed kirag_eval results")
    figures = json.loads(results.read_text())
    part = next(p for p in kirag_eval.PARTS if f"{p}.budget" in figures)
    runs = {r.method: r for r in map(read_scores, (kirag_eval.RESULTS / "kirag_eval" / part).glob("*.jsonl.gz"))}
    for family in ("primary", "secondary"):
        prefix = f"{part}.paired.{family}."
        count = len({k[len(prefix):].split(".")[0] for k in figures if k.startswith(prefix)})
        committed = [{f: figures[f"{prefix}{i}.{f}"] for f in ("method", "against", "metric", "p", "p (Holm)")}
                     for i in range(count)]
        again = significance([(runs[c["method"]], runs[c["against"]], c["metric"]) for c in committed])
        assert [r[f] for r in again for f in ("p", "p (Holm)")] == pytest.approx(
            [c[f] for c in committed for f in ("p", "p (Holm)")])


def test_the_validation_choices_are_recomputed_from_the_committed_scores():
    folder = kirag_eval.RESULTS / kirag_eval.VALIDATION
    if not (folder / "ranking_sweep.jsonl.gz").is_file():
        pytest.skip("no committed kirag_validation scores")
    figures = json.loads((kirag_eval.RESULTS / f"{kirag_eval.VALIDATION}.json").read_text())
    pooled, trained = {}, {}
    for group in (g for g in folder.iterdir() if g.is_dir()):
        for path in group.glob("*.jsonl.gz"):
            key, run = path.name.removesuffix(".jsonl.gz").replace("_", " "), read_scores(path)
            assert run.summary()["recall@5"] == pytest.approx(figures[f"{group.name}.{key}.recall@5"])
            pooled.setdefault(key, []).extend(s["recall@5"] for s in run.scores.values())
            if key.startswith("kirag trained "):
                trained.setdefault(key.split()[-1], {}).update({q: s["recall@5"] for q, s in run.scores.items()})
    assert sorted(trained) == sorted(kirag_eval.RETRIEVERS)
    assert all(len(pooled[f"kirag trained {r}"]) == figures["pooled.questions"] for r in kirag_eval.RETRIEVERS)
    for weight in kirag_eval.WEIGHTS:
        recalls = pooled[f"rerank {weight}"]
        assert sum(recalls) / len(recalls) == pytest.approx(figures[f"pooled.rerank {weight}.recall@5"])
    assert figures["choice.rerank.weight"] == max(kirag_eval.WEIGHTS, key=lambda w: (sum(pooled[f"rerank {w}"]), -w))
    swept, pooled_sweep = read_rows(folder / "ranking_sweep.jsonl.gz"), {}
    for retriever in kirag_eval.RETRIEVERS:
        for ranking in map(kirag_eval.ranking_name, kirag_eval.RANKINGS):
            recalls = {r["question_id"]: r["recall@5"] for r in swept
                       if (r["retriever"], r["ranking"]) == (retriever, ranking)}
            pooled_sweep[retriever, ranking] = sum(recalls.values()) / len(recalls)
            assert pooled_sweep[retriever, ranking] == pytest.approx(
                figures[f"pooled.ranking {retriever} {ranking}.recall@5"])
            if ranking == "1/0/0":  # the paper's rule, which the Aligner-only runs ranked by
                assert recalls == pytest.approx(trained[retriever])
    grid_choice = max(pooled_sweep, key=pooled_sweep.get)  # first of equals
    pooled_steps, per_question = {}, {}
    for retriever in kirag_eval.RETRIEVERS:
        for ranking in map(kirag_eval.ranking_name, kirag_eval.STEP_RANKINGS):
            recalls = {r["question_id"]: r["recall@5"] for r in swept
                       if (r["retriever"], r["ranking"]) == (retriever, ranking)}
            pooled_steps[retriever, ranking] = sum(recalls.values()) / len(recalls)
            per_question[retriever, ranking] = recalls
            assert pooled_steps[retriever, ranking] == pytest.approx(
                figures[f"pooled.ranking {retriever} {ranking}.recall@5"])
    steps_best = max(pooled_steps, key=pooled_steps.get)
    grid = {r["question_id"]: r["recall@5"] for r in swept if (r["retriever"], r["ranking"]) == grid_choice}
    test = paired_test([grid[q] for q in per_question[steps_best]], list(per_question[steps_best].values()))
    assert (test.diff, test.p) == pytest.approx((figures["steps ablation.difference"], figures["steps ablation.p"]))
    assert figures["steps ablation.adopted"] == (test.diff > 0 and test.p < 0.05)
    chosen = kirag_eval.ranking_name(RankingConfig(*(figures[f"choice.ranking.{n}"] for n in kirag_eval.WEIGHT_NAMES),
                                                   text_query=figures["choice.ranking.text_query"]))
    adopted = figures["steps ablation.adopted"]
    assert (figures["choice.kirag.retriever"], chosen) == (steps_best if adopted else grid_choice)


@pytest.fixture
def ablation_world(demo_part, monkeypatch, tmp_path):
    """validate_ablations over the demo part with its runs stubbed: each checkpoint's R@5 per question is
    given by `world["recall"][checkpoint file name]`, and what would be written is kept in `world`."""
    world = {"recall": {}, "trained": {}, "written": {}, "committed": {}}
    monkeypatch.setitem(kirag_eval.PARTS, "demo", replace(demo(), kg=covered_kg(tmp_path / "kg")))
    monkeypatch.setattr(kirag_eval, "choices",
                        lambda aligner: kirag_eval.Choices(0.5, "hybrid", RankingConfig(0.0, 1.0, 0.5), {}))
    monkeypatch.setattr(kirag_eval, "trained_datamodule", lambda checkpoint: SimpleNamespace(
        train_records=[SimpleNamespace(question_id=q) for q in world["trained"].get(checkpoint.name, [])]))
    ran = {}

    def evaluate(config):
        ran[config.output_dir] = config

    def read_run(folder):
        config = ran[str(folder)]
        recall = world["recall"][config.aligner.name.rsplit("/", 1)[-1]]
        questions = question_ids(config.data)
        return kirag_eval.ScoredRun(config.name, "c", {q: {"recall@5": recall[i]} for i, q in enumerate(questions)},
                                    str(folder))

    monkeypatch.setattr(kirag_eval, "evaluate", evaluate)
    monkeypatch.setattr(kirag_eval, "read_run", read_run)
    monkeypatch.setattr(kirag_eval, "commit_scores", lambda name, runs: world["committed"].update({name: runs}))
    monkeypatch.setattr(kirag_eval, "write_results", lambda name, text, flat: world["written"].update(
        {name: (text, flat)}))
    world["ran"] = ran
    for name in ("recipe.ckpt", "ablation.ckpt"):
        (tmp_path / "run" / name.split(".")[0] / "checkpoints").mkdir(parents=True)
        (tmp_path / "run" / name.split(".")[0] / "checkpoints" / name).write_bytes(name.encode())
    world["recipe"] = tmp_path / "run" / "recipe" / "checkpoints" / "recipe.ckpt"
    world["ablation"] = tmp_path / "run" / "ablation" / "checkpoints" / "ablation.ckpt"
    return world


def validated(n: int):
    return aligner_data(validated=[f"demo-{i:03d}" for i in range(1, n + 1)])


def test_a_training_ablation_runs_the_released_loop_and_is_adopted_only_when_ahead_after_holm(demo_part,
                                                                                                ablation_world):
    world, n = ablation_world, len(question_ids(DataConfig()))
    world["recall"] = {"recipe.ckpt": [0.0] * n, "ablation.ckpt": [1.0] * n}
    kirag_eval.validate_ablations([demo_part], validated(n), str(world["recipe"]), "`r` (1)", [world["ablation"]])
    configs = list(world["ran"].values())
    assert [c.aligner.name for c in configs] == [str(world["recipe"]), str(world["ablation"])]
    assert all(c.kirag.ranking == RankingConfig(0.0, 1.0, 0.5, score_text=True) and c.retriever == "hybrid"
               and not c.reader.enabled for c in configs)  # the retriever and ranking chosen on validation, no reader
    text, flat = world["written"]["kirag_ablations"]
    name = next(k.removesuffix(".adopted") for k in flat if k.endswith(".adopted"))
    assert name.startswith("ablation-") and flat["pooled.recipe.recall@5"] == 0.0
    assert flat[f"paired.{name}.difference"] == 100.0
    assert flat[f"{name}.adopted"] is True and flat[f"paired.{name}.p (Holm)"] < 0.05
    assert list(world["committed"]) == ["kirag_ablations/demo"]
    # one question ahead is not enough evidence: the recipe stays
    world["recall"]["ablation.ckpt"] = [1.0] + [0.0] * (n - 1)
    kirag_eval.validate_ablations([demo_part], validated(n), str(world["recipe"]), "`r` (1)", [world["ablation"]])
    assert world["written"]["kirag_ablations"][1][f"{name}.adopted"] is False
    assert f"{name}: not adopted." in world["written"]["kirag_ablations"][0]


def test_an_ablation_that_trained_on_the_validation_questions_is_refused(demo_part, ablation_world):
    ablation_world["trained"] = {"ablation.ckpt": ["demo-002"]}
    ablation_world["recall"] = {"recipe.ckpt": [0.0] * 3, "ablation.ckpt": [0.0] * 3}
    with pytest.raises(SystemExit, match="trained on 1 of the demo validation questions \\(first: demo-002\\)"):
        kirag_eval.validate_ablations([demo_part], validated(3), str(ablation_world["recipe"]), "`r` (1)",
                                      [ablation_world["ablation"]])


def test_a_checkpoints_runs_are_kept_by_its_training_run_and_content_digest(tmp_path):
    checkpoint = tmp_path / "multi" / "checkpoints" / "best.ckpt"
    with pytest.raises(SystemExit, match="best.ckpt is missing: python prepare.py recipe"):
        kirag_eval.trained_aligner(checkpoint, tmp_path / "runs")
    checkpoint.parent.mkdir(parents=True)
    checkpoint.write_bytes(b"weights")
    trained, runs, label = kirag_eval.trained_aligner(checkpoint, tmp_path / "runs")
    digest = kirag_eval.content_digest(checkpoint)[:8]
    assert trained == checkpoint.resolve() and runs == tmp_path / "runs" / f"multi-{digest}"
    assert label == f"`{trained}` (content digest {digest})"
    checkpoint.write_bytes(b"retrained")
    assert kirag_eval.trained_aligner(checkpoint, tmp_path / "runs")[1] != runs
