"""MIND's claim, tested: answers per retrieval call. Every trigger's operating point is chosen on
validation questions by what a user pays for; the test questions are scored once.

    python -m benchmarks.mind_eval --split validation   # calibrate, sweep every trigger, choose; the curve
    python -m benchmarks.mind_eval --split test         # the chosen points, once, on the test questions
        [--call_cost 0.01 | --call_budget 2.0] [--attention sentence] [--methods ...]

Calibration, never on an evaluated question: closed-book traces of the first `--trace_questions`
questions of HotpotQA hipporag_train_100 (a training split), labelled per sentence
(`training_data/traces.py`), archived in `data/traces/` so that a fresh checkout calibrates on the same
traces without the LM. `TriggerCalibrator` learns α, β, γ, δ on 80% of the traced questions (no
class weights: the labels as they are, with a price per retrieval); on the other 20%, the trigger's
AUROC and F1 are reported against the hand-set values and DRAGIN's median threshold, and every label rule
(`sentence_label`) with how well max S ranks its labels. A trigger that fires on every sentence is kept when
most traced sentences need retrieval, and the report says so.

Every method runs MIND's loop with BM25 (as in MIND's paper), 3 passages per retrieval (kirag+mind: each
KiRAG loop's ranking), the packaged LM, `--attention` for every signal, and answers through the reader from
its top 3 passages, as every other method of the project does, so the methods differ only in what they
retrieve and when.

`--split validation`: HotpotQA ircot_dev_500 questions 101 to 100 + `--val_questions` over their own
contexts (never evaluated on; no MIND setting was made on them). The sweep, the calls-F1 curve
(`mind_curve.png` and its table in `mind_validation.md`):
- `mind` calibrated and hand-set: θ scaled by s = `mind.threshold_scale` in `SCALES`;
- `dragin`: θ at quantiles `QUANTILES` of the training traces' max S;
- `random_trigger` at rates `RATES`, seeds `SEEDS` (the control: a trigger that knows nothing);
- `fixed_interval`: every sentence.
Each of mind calibrated, mind hand-set and dragin keeps its point of the highest objective: F1 minus
`--call_cost` per retrieval call a question, or the highest F1 within `--call_budget` calls. At the
calibrated point, the options of `ABLATIONS` are ablations, each kept when its objective is higher:
the entity confidence read from the reasoning's tokens (or the extraction output's), MIND's refined
sub-query (or the question plus entities), and the entities kept by the calibrated threshold (or the
top 2, so that a triggered search has entities). The random rows run with the calibrated parameters'
entity filter, as on test. The choices go to `mind_validation.json`, every run's
per-question scores to `benchmarks/results/mind_validation/`.

`--split test`: the first `--questions` questions of ircot_dev_500, refused without choices for the
same calibrated parameters. Fixed interval, the chosen points, `random_trigger` at the calibrated
point's firing rate on validation, with the calibrated point's entities and sub-query so that only the
trigger differs (each of `--seeds`: the paired test reads the mean over seeds per question, and each seed
apart), and `kirag+mind` (the calibrated point, KiRAG's Aligner-only loop with
`--aligner` and the retriever and ranking `benchmarks.kirag_eval` chose for it on validation, over the
committed triples of these questions' contexts:
`python prepare.py kg --config configs/kg/hotpotqa_ircot_dev_100.yaml`), beside `kirag`, that loop once
from the question with no trigger, over the same triples and reader. Paired sign-flip tests, Holm
within the family; per-question scores in `benchmarks/results/mind_eval/`.

Every run resumes: predictions are appended as they are made, and the methods advance in blocks of
`--block` questions, so a run cut short leaves them level. One process: llama.cpp uses every core.
A test run that `benchmarks/results/mind_eval/` already holds (its committed `run.json` shows the same config
over the same inputs, and its scores cover every question) is read from there, not run again: the test
can be finished over several sittings, each committing what it finished. The test tables are rewritten
as each run ends, from the runs that answered every question. A committed run of a method not
named in `--methods` stays in the table as it was made, when its config is today's for that method: its
inputs are not checked (kirag rows made with an Aligner this checkout no longer holds, say), and the table
names the digests its `run.json` records.
"""

import argparse
import gzip
import json
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import get_args

import lightning as L
from matplotlib.figure import Figure
import torch
from torchmetrics.classification import BinaryAUROC, BinaryF1Score

from benchmarks import kirag_eval
from benchmarks.common import (RESULTS, ROOT, SHARED_DATA, commit_scores, committed_runs, machine, parse_args,
                               run_record, stop_if_held, write_results)
from core.records import content_digest, log_records, split_held_out, write_atomic
from datamodules.loaders import DataConfig
from datamodules.trigger_traces import TriggerTraceDataModule, collate, read_traces
from evaluation.config import AlignerConfig, EvalConfig, KiRAGConfig, MindConfig, ReaderConfig
from evaluation.predictions import read_predictions
from evaluation.report import (cost_table, headline_table, markdown_table, paired_questions, significance,
                               significance_table)
from evaluation.runner import evaluate
from evaluation.scores import ScoredRun, read_run
from evaluation.stats import p_text
from models.trigger_calibrator import TriggerCalibrator, attention_key
from models.uncertainty import MindParams, dynamic_threshold, max_rind_score
from training_data.traces import SentenceLabel, TracesConfig, build_traces, label_counts, relabel

RUNS = ROOT / "runs" / "bench" / "mind"
TRAIN = DataConfig("hotpotqa", str(SHARED_DATA / "hotpotqa" / "hipporag_train_100.json"), None)
DEV = DataConfig("ircot", str(SHARED_DATA / "hotpotqa" / "ircot_dev_500.jsonl"), None)
TEST_QUESTIONS = 100  # DEV's first: the test; after them validation (and the Aligner's training questions)
KG = ROOT / "runs" / "kg" / "hotpotqa_ircot_dev_100"  # the first 100 dev questions' contexts, committed triples
# The calibration's traces, committed: a fresh checkout calibrates on the very traces validation chose with
TRACES_ARCHIVE = ROOT / "data" / "traces" / "hotpotqa_train_100.jsonl.gz"
VALIDATION = "mind_validation"
VAL_FRACTION, SEED = 0.2, 0
SCALES = (0.25, 0.5, 1.0, 2.0, 4.0)
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)
RATES = (0.25, 0.5, 0.75)
SEEDS = (0, 1, 2)
CHOSEN = ("mind calibrated", "mind hand-set", "dragin")  # the families whose point is chosen on validation
METHODS = ("dragin", "mind_hand_set", "mind_calibrated", "random", "kirag_mind", "kirag")
# At the calibrated point, each option tried against the chosen setting: (name, MindSettings field, the other value)
ABLATIONS = (("entity signals", "entity_signals", "extraction"), ("sub-query", "subquery", "refined"),
             ("entity selection", "entity_selection", "top"))


def paths(attention: str) -> tuple[Path, Path]:
    """The traces (both attention kinds) and the calibrated parameters of `attention`."""
    return RUNS / "traces.jsonl", RUNS / f"trigger_{attention}.json"


def sync_traces(traces: Path, archive: Path, build) -> dict:
    """Restore `traces` from `archive` when runs/ lacks them, `build()` (which resumes, so only what the archive
    lacks is traced), then archive the result: the LM is asked only for questions never traced before."""
    if not traces.is_file() and archive.is_file():
        traces.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(traces, gzip.decompress(archive.read_bytes()).decode("utf-8"))
    report = build()
    archive.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(archive, traces.read_text(encoding="utf-8"), compress=True)
    return report


def calibrate(trace_questions: int, attention: str) -> dict:
    traces, params = paths(attention)
    config = TracesConfig(data=replace(TRAIN, limit=trace_questions), output=str(traces))
    print("traces:", sync_traces(traces, TRACES_ARCHIVE, lambda: build_traces(config)))
    model = TriggerCalibrator(initial=MindParams(threshold=0.5), cost=0.05, attention=attention,
                              params_path=str(params))
    trainer = L.Trainer(max_epochs=100, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        accelerator="cpu", deterministic=True)
    L.seed_everything(SEED)
    params.unlink(missing_ok=True)  # written again only when sound
    trainer.fit(model, TriggerTraceDataModule(str(traces), val_fraction=VAL_FRACTION, seed=SEED))
    return {"learned": model.params(), "written": params.is_file()}


def sentence_rows(questions: list[dict], attention: str) -> tuple[torch.Tensor, ...]:
    batch = collate(questions)
    h, a = batch["sentence_entropy"], batch[attention_key("sentence", attention)]
    s, mask = batch["sentence_content"], batch["sentence_mask"]
    return max_rind_score(h, a, s, mask), h, a, mask, batch["sentence_label"]


def label_rules(attention: str, trace_questions: int) -> list[dict]:
    """Each rule of `TracesConfig.sentence_label` over every traced sentence: how many it says need retrieval,
    and how well max S (MIND's and DRAGIN's score, before any threshold) ranks them."""
    traces, _ = paths(attention)
    benchmark = replace(TRAIN, limit=trace_questions).load()
    by_id, passages = {q.id: q for q in benchmark.questions}, benchmark.passage_by_id()
    records, parsed = [r for _, r in log_records(traces)], read_traces(traces)
    rows = []
    for rule in get_args(SentenceLabel):
        labelled = [{**q, "sentences": [{**s, "label": float(again["label"])} for s, again in zip(
            q["sentences"], relabel(r, by_id[r["question_id"]], passages, rule)["sentences"], strict=True)]}
            for q, r in zip(parsed, records, strict=True)]
        score, *_, labels = sentence_rows(labelled, attention)
        rows.append({"rule": rule + (" (calibrated on)" if rule == TracesConfig.sentence_label else ""),
                     "sentences": len(labels), "needing retrieval": int(labels.sum()),
                     "AUROC of max S": float(BinaryAUROC()(score, labels.long()))})
    return rows


def trigger_report(attention: str, learned: MindParams) -> tuple[list[dict], list[float]]:
    """On the held-out traced questions' sentences: AUROC of max S − θ (NaN with one class) and F1 of
    max S > θ, for the calibrated θ, the hand-set one, DRAGIN's median threshold (set on the training
    traces) and fixed-interval retrieval (a θ below every score: fires always, ranks nothing). Also
    DRAGIN's thresholds: the `QUANTILES` of the training sentences' max S."""
    traces, _ = paths(attention)
    train, held = split_held_out(read_traces(traces), VAL_FRACTION, SEED)  # the calibration's own split
    training_scores = sentence_rows(train, attention)[0]
    quantiles = [float(q) for q in torch.quantile(training_scores, torch.tensor(QUANTILES))]
    median = float(training_scores.median())
    score, h, a, mask, labels = sentence_rows(held, attention)
    thresholds = {"calibrated": dynamic_threshold(h, a, mask, learned.alpha, learned.beta),
                  "hand-set (α = β = 1)": dynamic_threshold(h, a, mask, 1.0, 1.0),
                  f"DRAGIN median θ = {median:.3g}": torch.full_like(score, median),
                  "always (fixed interval)": score - 1.0}
    rows = []
    for name, theta in thresholds.items():
        fires = (score > theta).long()
        rows.append({"trigger": name, "held-out sentences": len(labels), "needing retrieval": int(labels.sum()),
                     "AUROC": float(BinaryAUROC()(score - theta, labels.long())) if 0 < labels.mean() < 1 else math.nan,
                     "F1": float(BinaryF1Score()(fires, labels.long())), "fires on": float(fires.float().mean())})
    return rows, quantiles


def advance(configs: list[EvalConfig], questions: int, block: int, finished=lambda config: None) -> None:
    """Run `configs` side by side on their first `questions`, `block` questions at a time, so that a run cut
    short leaves them level (each run resumes); `finished(config)` follows each run's last question. A folder
    holding another config's run (a random rate chosen again, say) stops it before any run starts, not when its
    turn comes an hour later."""
    stop_if_held(configs)
    for until in [*range(block, questions, block), questions]:
        for config in configs:
            evaluate(config, until)
            if until == questions:
                finished(config)


# -- the configs -----------------------------------------------------------------------------------


def base_config(data: DataConfig, attention: str) -> EvalConfig:
    """Every run's settings: BM25, 3 passages per retrieval, the reader on; KiRAG's over the committed KG. The
    Aligner is set on the KiRAG runs alone, so that the other runs' configs do not depend on whether it exists."""
    return EvalConfig(data=data, retriever="bm25", mind=MindConfig(retrieve_k=3, attention=attention),
                      reader=ReaderConfig(enabled=True), kirag=KiRAGConfig(kg=str(KG), extract_missing=False))


def sweep_configs(base: EvalConfig, params: Path | None, quantiles: list[float]
                  ) -> dict[str, tuple[str, float, EvalConfig]]:
    """run key -> (family, the swept value, config): every point of the validation curve."""
    points = {"fixed_interval": ("fixed interval", 1.0, replace(base, method="fixed_interval"))}
    families = [("mind hand-set", None)] + ([("mind calibrated", str(params))] if params else [])
    for family, with_params in families:
        for s in SCALES:
            mind = replace(base.mind, params=with_params, threshold_scale=s)
            points[f"{family.replace(' ', '_')}_s{s:g}"] = (family, s, replace(base, method="mind", mind=mind))
    for q, theta in zip(QUANTILES, quantiles, strict=True):
        points[f"dragin_q{q:g}"] = ("dragin", theta, replace(base, method="dragin",
                                                              mind=replace(base.mind, fixed_threshold=theta)))
    for rate in RATES:  # the calibrated entity filter, as on test: beside calibrated MIND only the trigger differs
        for seed in SEEDS:
            mind = replace(base.mind, random_rate=rate, seed=seed, params=str(params) if params else None)
            points[f"random_r{rate:g}_seed{seed}"] = ("random", rate, replace(base, method="random_trigger", mind=mind))
    return points


def firing_rate(output_dir: str | Path) -> float:
    """The share of a run's generated sentences with a word at which it retrieved (its trace)."""
    steps = [step for p in read_predictions(Path(output_dir) / "predictions.jsonl").values() for step in p.trace or []
             if not step.get("forced_answer") and step["sentence"].strip()]
    return sum(bool(step["retrieve"]) for step in steps) / max(len(steps), 1)


def objective(f1: float, calls: float, call_cost: float, call_budget: float | None) -> float:
    """What a user gets for what they pay: F1 minus `call_cost` per retrieval call a question, or, with a
    `call_budget`, F1 within that many calls a question (-inf above it)."""
    if call_budget is not None:
        return f1 if calls <= call_budget else -math.inf
    return f1 - call_cost * calls


def best_point(points: list[dict], call_cost: float, call_budget: float | None) -> dict:
    """The point of the highest objective; on a tie, the one of fewer calls, then the first."""
    return max(points, key=lambda p: (objective(p["f1"], p["retrieval_calls"], call_cost, call_budget),
                                      -p["retrieval_calls"]))


# -- validation: sweep, choose, draw ----------------------------------------------------------------------


def reusable(configs: dict[str, EvalConfig], questions: int) -> tuple[dict[str, Path], dict]:
    """The curve's runs of `configs` that benchmarks/results/mind_validation/ holds (`committed_runs`) and whose
    firing rate the committed table records, with that table's flat figures: those runs are read back."""
    table = RESULTS / f"{VALIDATION}.json"
    flat = json.loads(table.read_text()) if table.is_file() else {}
    found = committed_runs(VALIDATION, configs, questions)
    return {k: v for k, v in found.items() if f"curve.{k}.fires on" in flat}, flat


def validate(args: argparse.Namespace, calibration: dict, triggers: list[dict], quantiles: list[float]) -> None:
    _, params = paths(args.attention)
    data = replace(DEV, offset=TEST_QUESTIONS, limit=args.val_questions)
    base = base_config(data, args.attention)
    points = sweep_configs(base, params if calibration["written"] else None, quantiles)
    runs = RUNS / "validation" / f"{args.attention}-q{args.val_questions}"  # the corpus is these questions' contexts
    for key, (_, _, config) in points.items():
        config.output_dir = str(runs / key)
    committed, flat = reusable({key: config for key, (_, _, config) in points.items()}, args.val_questions)
    if committed:
        print("committed validation runs reused (same config and inputs):", ", ".join(committed))
    advance([config for key, (_, _, config) in points.items() if key not in committed], args.val_questions, args.block)
    rows, folders = [], {}
    for key, (family, value, config) in points.items():
        folders[key] = committed.get(key) or config.output_dir
        summary = read_run(folders[key]).summary()
        fires = flat[f"curve.{key}.fires on"] if key in committed else firing_rate(config.output_dir)
        rows.append({"run": key, "family": family, "value": value, "f1": summary["f1"], "em": summary["em"],
                     "recall@5": summary["recall@5"], "retrieval_calls": summary["retrieval_calls"],
                     "fires on": fires, "questions": int(summary["questions"])})
    chosen = {family: best_point([r for r in rows if r["family"] == family], args.call_cost, args.call_budget)
              for family in CHOSEN if any(r["family"] == family for r in rows)}
    ablations = []
    if "mind calibrated" in chosen:
        point, kept = points[chosen["mind calibrated"]["run"]][2], chosen["mind calibrated"]
        ours = objective(kept["f1"], kept["retrieval_calls"], args.call_cost, args.call_budget)
        settings = ", ".join(getattr(point.mind, setting) for _, setting, _ in ABLATIONS)
        ablations.append({"setting": f"the chosen point ({settings})",
                          "f1": kept["f1"], "retrieval_calls": kept["retrieval_calls"], "objective": ours, "kept": ""})
        options = {}
        for name, setting, other in ABLATIONS:
            key = f"ablation_{setting}_{other}"
            config = replace(point, mind=replace(point.mind, **{setting: other}), output_dir=str(runs / key))
            folders[key] = committed_runs(VALIDATION, {key: config}, args.val_questions).get(key) or config.output_dir
            if folders[key] == config.output_dir:
                advance([config], args.val_questions, args.block)
            summary = read_run(folders[key]).summary()
            theirs = objective(summary["f1"], summary["retrieval_calls"], args.call_cost, args.call_budget)
            options[setting] = other if theirs > ours else getattr(point.mind, setting)
            ablations.append({"setting": f"{name}: {getattr(point.mind, setting)} -> {other}", "f1": summary["f1"],
                              "retrieval_calls": summary["retrieval_calls"], "objective": theirs,
                              "kept": options[setting]})
        chosen["mind calibrated"] = {**kept, **options}
    commit_scores(VALIDATION, folders)
    write_validation(args, rows, chosen, ablations, calibration, triggers, params)


def draw_curve(rows: list[dict], path: Path) -> None:
    """Retrieval calls against F1 and R@5, a line per family (random: the mean over seeds at each rate)."""
    figure = Figure(figsize=(10, 4))
    axes = figure.subplots(1, 2)
    for family in dict.fromkeys(r["family"] for r in rows):
        group: dict[float, list[dict]] = {}
        for r in rows:
            if r["family"] == family:
                group.setdefault(r["value"], []).append(r)
        points = sorted(((sum(r["retrieval_calls"] for r in g) / len(g), sum(r["f1"] for r in g) / len(g),
                          sum(r["recall@5"] for r in g) / len(g)) for g in group.values()))
        for ax, index in ((axes[0], 1), (axes[1], 2)):
            ax.plot([p[0] for p in points], [100 * p[index] for p in points], marker="o", label=family)
    for ax, name in zip(axes, ("F1", "R@5"), strict=True):
        ax.set_xlabel("retrieval calls per question")
        ax.set_ylabel(f"{name} (%)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def write_validation(args, rows, chosen, ablations, calibration, triggers, params: Path) -> None:
    rules = label_rules(args.attention, args.trace_questions)
    RESULTS.mkdir(parents=True, exist_ok=True)
    draw_curve(rows, RESULTS / "mind_curve.png")
    rule = (f"the highest F1 within {args.call_budget:g} retrieval calls a question" if args.call_budget is not None
            else f"the highest F1 − {args.call_cost:g} × retrieval calls a question")
    learned = calibration["learned"]
    values = ", ".join(f"{k} {v:.3g}" for k, v in vars(learned).items() if isinstance(v, float))
    traces, _ = paths(args.attention)
    labels = label_counts(read_traces(traces))
    shown = [{k: v for k, v in r.items() if k != "family"} | {"family": r["family"]} for r in rows]
    choice_rows = [{"family": f, "run": c["run"], "value": c["value"], "f1": c["f1"],
                    "retrieval_calls": c["retrieval_calls"], "fires on": c["fires on"]} for f, c in chosen.items()]
    markdown = (
        "# MIND: operating points chosen on validation questions\n\n"
        f"Split: HotpotQA ircot_dev_500 questions {TEST_QUESTIONS + 1}-{TEST_QUESTIONS + args.val_questions} "
        "over their own contexts (validation: never scored as test); the calibration on HotpotQA "
        "hipporag_train_100 traces. BM25, 3 passages per "
        f"retrieval, {args.attention} attention, every answer from the reader on the method's top 3 passages. "
        f"Machine: {machine()}.\n\n"
        f"Calibration: {labels['sentences']} traced sentences, {labels['sentences_needing_retrieval']} labelled as "
        f"needing retrieval; {labels['entities']} entities, {labels['useful_entities']} useful; learned {values}; "
        + ("written" if calibration["written"] else "refused as degenerate, so no calibrated point") + ".\n\n"
        "## The label rules\n\nWhat a traced sentence needs (`prepare.py traces`, `sentence_label`): `change`, the "
        "gold passages in memory make the LM state other names or numbers; `claims`, that or a name or number the "
        "gold passages lack. Every traced sentence; AUROC of max S alone (0.5 is chance).\n\n"
        + markdown_table(rules, list(rules[0]))
        + "\n## The trigger on held-out traced sentences\n\n" + markdown_table(triggers, list(triggers[0]))
        + f"\n## The curve\n\n![calls against F1 and R@5](mind_curve.png)\n\nValue: θ's scale s for MIND, θ for "
        "DRAGIN, the rate for random triggering (one row per seed). F1, EM and R@5 in %.\n\n"
        + markdown_table(shown, ["family", "run", "value", "questions", "retrieval_calls", "fires on", "f1", "em",
                                 "recall@5"])
        + f"\n## Chosen: {rule}\n\n" + markdown_table(choice_rows, list(choice_rows[0]))
        + ("\n## Faithful-signal ablations at the calibrated point\n\n" + markdown_table(ablations, list(ablations[0]))
           if ablations else ""))
    flat = {"rule": rule, "params_digest": content_digest(params) if params.is_file() else None,
            "attention": args.attention, "val_questions": args.val_questions,
            **{f"label_rule.{r['rule'].split()[0]}.{k}": v for r in rules for k, v in r.items() if k != "rule"}}
    flat |= {f"curve.{r['run']}.{k}": v for r in rows for k, v in r.items() if isinstance(v, int | float)}
    flat |= {f"choice.{f}.{k}": v for f, c in chosen.items() for k, v in c.items()}
    write_results(VALIDATION, markdown, flat)


# -- test: the chosen points, once ---------------------------------------------------------------------


def choices(attention: str) -> dict:
    """The validation choices, refused when missing or made for other calibrated parameters."""
    path = RESULTS / f"{VALIDATION}.json"
    if not path.is_file():
        sys.exit(f"{path} is missing: run `python -m benchmarks.mind_eval --split validation` first")
    flat = json.loads(path.read_text())
    _, params = paths(attention)
    digest = content_digest(params) if params.is_file() else None
    if flat["attention"] != attention or flat["params_digest"] != digest:
        sys.exit(f"{path} holds choices for other calibrated parameters or attention: run --split validation again")
    return flat


def kirag_choices(aligner: Path) -> dict:
    """KiRAG's own choices for this Aligner, made on its validation questions (`kirag_validation.json`): the
    retriever and passage ranking of the kirag runs; empty without the Aligner (its runs cannot be made), and
    refused when they were made for another checkpoint."""
    if not aligner.is_file():
        return {}
    chosen = kirag_eval.choices(kirag_eval.trained_aligner(aligner, kirag_eval.RUNS)[2])
    return {"kirag.retriever": chosen.retriever, "kirag.ranking": chosen.ranking}


def test_run_configs(args: argparse.Namespace, flat: dict) -> dict[str, EvalConfig]:
    """The test runs, in table order (fixed interval first: the paired tests' baseline). The kirag runs take
    KiRAG's own choices when `flat` holds them (`kirag_choices`)."""
    _, params = paths(args.attention)
    base = base_config(replace(DEV, limit=args.questions), args.attention)
    runs = {"fixed_interval": replace(base, method="fixed_interval", name="fixed interval (every sentence)")}
    if "dragin" in args.methods and "choice.dragin.value" in flat:
        theta = flat["choice.dragin.value"]
        runs["dragin"] = replace(base, method="dragin", mind=replace(base.mind, fixed_threshold=theta),
                                 name=f"DRAGIN θ = {theta:.3g}")
    if "mind_hand_set" in args.methods and "choice.mind hand-set.value" in flat:
        s = flat["choice.mind hand-set.value"]
        runs["mind_hand_set"] = replace(base, method="mind", mind=replace(base.mind, threshold_scale=s),
                                        name=f"mind hand-set, θ x{s:g}")
    kirag = replace(base, aligner=AlignerConfig(name=str(args.aligner)),
                    retriever=flat.get("kirag.retriever", base.retriever),
                    kirag=replace(base.kirag, ranking=flat.get("kirag.ranking", base.kirag.ranking)))
    if "choice.mind calibrated.value" in flat:
        s = flat["choice.mind calibrated.value"]
        options = {setting: flat.get(f"choice.mind calibrated.{setting}", getattr(base.mind, setting))
                   for _, setting, _ in ABLATIONS}  # an option validation did not try keeps its default
        calibrated = replace(base.mind, params=str(params), threshold_scale=s, **options)
        if "mind_calibrated" in args.methods:
            runs["mind_calibrated"] = replace(base, method="mind", mind=calibrated, name=f"mind calibrated, θ x{s:g}")
        if "random" in args.methods:  # the trigger alone differs: the calibrated point's entities and sub-query
            rate = round(flat["choice.mind calibrated.fires on"], 3)
            for seed in args.seeds:
                runs[f"random_seed{seed}"] = replace(base, method="random_trigger",
                                                     mind=replace(calibrated, random_rate=rate, seed=seed),
                                                     name=f"random trigger at {rate:.0%}, seed {seed}")
        if "kirag_mind" in args.methods:
            runs["kirag_mind"] = replace(kirag, method="kirag+mind", mind=calibrated, name="kirag+mind calibrated")
    if "kirag" in args.methods:
        runs["kirag"] = replace(kirag, method="kirag", name="kirag aligner-only (no trigger)")
    for key, config in runs.items():
        config.output_dir = str(RUNS / "test" / f"{args.attention}-q{args.questions}" / key)
    return runs


def seed_mean(runs: list[ScoredRun], label: str) -> ScoredRun:
    """Per question, the mean of each figure over the runs (seeds) that have it."""
    scores = {}
    for q in runs[0].scores:
        scores[q] = {}
        for metric in runs[0].scores[q]:
            values = [r.scores[q][metric] for r in runs if r.scores.get(q, {}).get(metric) is not None]
            scores[q][metric] = sum(values) / len(values) if values else None
    return ScoredRun(label, runs[0].corpus, scores, "")


def score_test(args: argparse.Namespace, triggers: list[dict]) -> None:
    kirag = {"kirag_mind", "kirag"} & set(args.methods)
    if kirag and not KG.is_dir():
        sys.exit(f"{KG} is missing: python prepare.py kg --config configs/kg/hotpotqa_ircot_dev_100.yaml")
    if kirag and not args.aligner.is_file():
        sys.exit(f"{args.aligner} is missing: python prepare.py recipe --config configs/recipes/multi_cpu.yaml")
    flat = choices(args.attention) | kirag_choices(args.aligner)  # committed kirag runs are matched with them too
    configs = test_run_configs(args, flat)
    committed = committed_runs("mind_eval", configs, args.questions)
    if committed:
        print("committed runs reused (same config and inputs, all questions scored):", ", ".join(committed))
    every = test_run_configs(argparse.Namespace(**vars(args) | {"methods": list(METHODS)}), flat)
    kept = committed_runs("mind_eval", {k: c for k, c in every.items() if k not in configs}, args.questions,
                          inputs=False)
    if kept:
        print("committed runs kept as they were made (their methods not named):", ", ".join(kept))
    whole = dict(committed)  # key -> scores of a run that answered every question

    def tables(config: EvalConfig | None = None) -> None:
        """The tables of the whole runs so far, rewritten as each run ends: a sitting stopped midway keeps them."""
        if config is not None:
            whole[next(key for key, c in configs.items() if c is config)] = config.output_dir
        sources = {key: kept.get(key) or whole[key] for key in every if key in whole or key in kept}
        if "fixed_interval" in sources:  # every paired test's baseline
            write_test(args, flat, sources, kept, triggers)

    pending = [c for key, c in configs.items() if key not in committed]
    if pending:
        advance(pending, args.questions, args.block, finished=tables)
    else:
        tables()


def write_test(args, flat: dict, sources: dict[str, str | Path], kept: dict[str, Path], triggers: list[dict]) -> None:
    """The tables of the runs `sources` names (key -> output folder or committed scores), committed; `kept`:
    those read back without their inputs checked, which the setup names with the digests they were made from."""
    commit_scores("mind_eval", sources)
    runs = {key: read_run(source) for key, source in sources.items()}
    paired_questions(list(runs.values()))  # refuses runs over another corpus or with no shared question
    rows = [{"method": run.method, **run.summary()} for run in runs.values()]
    fixed = rows[0]
    for row in rows:
        row["calls vs fixed interval"] = row["retrieval_calls"] / max(fixed["retrieval_calls"], 1e-9)
    family = [(runs[k], runs["fixed_interval"], "f1") for k in runs if k != "fixed_interval"]
    seeds = [runs[k] for k in runs if k.startswith("random_seed")]
    if seeds and "mind_calibrated" in runs:
        random_mean = seed_mean(seeds, f"random trigger, mean of {len(seeds)} seed{'s' * (len(seeds) > 1)}")
        family += [(runs["mind_calibrated"], random_mean, "f1"), (runs["mind_calibrated"], random_mean, "recall@5")]
        if len(seeds) > 1:  # each seed apart; one seed is its own mean
            family += [(runs["mind_calibrated"], seed, "f1") for seed in seeds]
    if "kirag_mind" in runs and "kirag" in runs:  # what MIND's trigger does to KiRAG's loop
        family += [(runs["kirag_mind"], runs["kirag"], "f1"), (runs["kirag_mind"], runs["kirag"], "recall@5")]
    tests = significance(family)
    by_method = {t["method"]: t for t in tests if t["against"] == runs["fixed_interval"].method}
    for row in rows:
        row["f1 test"] = by_method.get(row["method"])
    labelled = [(row["method"], row) for row in rows]
    done = int(fixed["questions"])
    made_from = "; ".join(f"{runs[key].method} ({recorded_inputs(source)})" for key, source in kept.items())
    kept_text = (" Read back as committed, not rerun (their methods not named this time), from the inputs their "
                 f"`run.json` records: {made_from}.") if kept else ""
    kirag_text = ""
    if "kirag.ranking" in flat and {"kirag", "kirag_mind"} & runs.keys():
        kirag_text = (f" KiRAG's runs with the choices made on its own validation questions ({kirag_eval.VALIDATION}"
                      f".md): the {flat['kirag.retriever']} retriever, passages ranked by w_t/w_r/w_x "
                      f"{kirag_eval.ranking_name(flat['kirag.ranking'])}; kirag+mind keeps each KiRAG loop's whole "
                      "ranking, not 3 passages.")
    markdown = (
        "# MIND: when to retrieve (test questions)\n\n"
        f"Split: HotpotQA ircot_dev_500, first {done} questions over their own contexts, scored once; every "
        f"operating point chosen on validation ({VALIDATION}.md: {flat['rule']}). BM25, 3 passages per retrieval; "
        f"{args.attention} attention; every answer from the reader on the method's top 3 passages (packaged "
        f"Qwen2.5-Coder-0.5B-Instruct). EM, F1 and recall in %, 95% BCa intervals. Machine: {machine()}."
        f"{kirag_text}{kept_text}\n\n"
        + headline_table(labelled) + "\n### Cost\n\n" + cost_table(labelled)
        + "\n### Paired tests\n\nSign-flip tests on the same questions, differences in points, p adjusted by Holm "
        f"over the {len(tests)} comparisons."
        + (" Random triggering fires at the calibrated point's validation rate, with its entities and sub-query; "
           "its mean over seeds is the per-question mean of their scores." if seeds else "") + "\n\n"
        + significance_table(tests) + against_fixed_interval(rows, triggers))
    out = {"setup": markdown.split("\n\n")[1]}
    out |= {f"{key}.{c}": v for key, row in zip(sources, rows) for c, v in row.items() if isinstance(v, int | float)}
    out |= {f"paired.{i}.{field}": value for i, t in enumerate(tests) for field, value in t.items()}
    write_results("mind_eval", markdown, out)


def recorded_inputs(scores: Path) -> str:
    """The input digests (8 hex digits) that the `run.json` committed beside `scores` records."""
    inputs = json.loads(run_record(scores).read_text())["inputs"]
    return ", ".join(f"{name} {digest.split(':')[-1][:8]}" for name, digest in inputs.items())


def against_fixed_interval(rows: list[dict], triggers: list[dict]) -> str:
    """In words, from the table: each method's retrieval calls and F1 against fixed interval's (the
    first row), with the paired test; then how well the calibrated trigger ranks held-out sentences."""
    fixed, lines = rows[0], []
    for row in rows[1:]:
        test = row["f1 test"]
        diff, p = test["difference"], test["p (Holm)"]
        side = {"ahead": "above", "behind": "below"}.get(test["verdict"], "not significantly different from")
        lines.append(f"- {row['method']}: {row['calls vs fixed interval']:.2f}× fixed interval's retrieval calls "
                     f"({row['retrieval_calls']:.2f} against {fixed['retrieval_calls']:.2f} a question), at an F1 "
                     f"{side} its ({100 * row['f1']:.1f} against {100 * fixed['f1']:.1f}, {diff:+.1f} points, "
                     f"Holm-adjusted p {'= ' * (p >= 0.001)}{p_text(p)}; recall@5 {100 * row['recall@5']:.1f} against "
                     f"{100 * fixed['recall@5']:.1f}).")
    calibrated = next(t for t in triggers if t["trigger"] == "calibrated")
    lines.append(f"- The calibrated trigger ranks the held-out traced sentences at AUROC {calibrated['AUROC']:.3f} "
                 f"(0.5 is chance); at its threshold it fires on {calibrated['fires on']:.0%} of them, and "
                 f"{calibrated['needing retrieval'] / calibrated['held-out sentences']:.0%} need retrieval.")
    return "\n## Against fixed interval\n\n" + "\n".join(lines) + "\n"


def main(args: argparse.Namespace) -> None:
    if not 0 < args.questions <= TEST_QUESTIONS or args.val_questions < 1:
        sys.exit(f"--questions {args.questions}, --val_questions {args.val_questions}: the test is at most the first "
                 f"{TEST_QUESTIONS} questions of ircot_dev_500, those after them are validation (and kirag's Aligner "
                 "trained on them), and each split needs at least one question")
    calibration = calibrate(args.trace_questions, args.attention)
    triggers, quantiles = trigger_report(args.attention, calibration["learned"])
    if args.split == "validation":
        validate(args, calibration, triggers, quantiles)
    else:
        score_test(args, triggers)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=("validation", "test"), required=True)
    parser.add_argument("--questions", type=int, default=100, help="test questions")
    parser.add_argument("--val_questions", type=int, default=30, help="validation questions (ircot_dev_500 101-)")
    parser.add_argument("--trace_questions", type=int, default=100)
    parser.add_argument("--attention", choices=("raw", "sentence"), default="sentence")
    parser.add_argument("--call_cost", type=float, default=0.01,
                        help="F1 (0-1) a user gives up for one more retrieval call a question")
    parser.add_argument("--call_budget", type=float, default=None,
                        help="instead of a cost: the most retrieval calls a question; the highest F1 within it")
    parser.add_argument("--aligner", type=Path, default=ROOT / "runs/aligner/multi/checkpoints/best.ckpt",
                        help="the Aligner of kirag+mind and kirag (the released CPU recipe's)")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS),
                        help="random triggering's seeds on test, every one the table shows: those committed "
                             "before are read back, the others run (a sitting may pass fewer, the next all)")
    parser.add_argument("--block", type=int, default=10,
                        help="every method answers this many questions before the next block begins")
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS),
                        help="the methods to run beside fixed_interval on test (kirag_mind: KiRAG's loop at each "
                             "retrieval, slow on a CPU; kirag: its loop alone, no trigger)")
    main(parse_args(parser))
