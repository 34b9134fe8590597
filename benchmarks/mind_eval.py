"""MIND's claim, tested: fewer retrieval calls than fixed-interval retrieval at equal or better EM/F1.

    python -m benchmarks.mind_eval [--questions 100] [--trace_questions 100] [--attention sentence] [--methods ...]

Calibration, never on an evaluated question: closed-book traces of the first `--trace_questions`
questions of HotpotQA hipporag_train_100 (a training split), labelled per sentence
(`training_data/traces.py`). `TriggerCalibrator` learns on 80% of the traced questions; on the
sentences of the other 20%, the trigger's AUROC and F1 are reported against the hand-set values
(α = β = 1) and DRAGIN's threshold at the median max S of the training sentences. Degenerate
parameters are refused (not written): the calibrated methods are then skipped and the report says why.

Evaluation: the first `--questions` questions of HotpotQA ircot_dev_500 (the dev split) over their
own context passages, BM25 (as in MIND's paper), 3 passages per retrieval, the packaged LM on the
default backend, `--attention` for every signal (MIND's maxAttn); `--methods` (all but `kirag_mind`
by default; `fixed_interval` always runs):
- `fixed_interval`: retrieve at every sentence (the baseline of the paired tests);
- `dragin`: a fixed threshold on max S, 1.0 and the training traces' median;
- `mind` with the hand-set values (α = β = 1, γ = 1.0, δ = 0.2) and calibrated;
- `kirag_mind`: `kirag+mind` calibrated, KiRAG's Aligner-only loop as the retriever (the
  Aligner of configs/aligner/shared_cpu.yaml when trained), over triples extracted as it reaches
  passages (slow on a CPU); every search of its inner loop is counted.

Every run resumes: traces and predictions are appended as they are made, and the methods advance
in blocks of `--block` questions, so a run cut short leaves them level; the table is written after
every block, on the questions done so far. One process: llama.cpp uses every core, and two
processes on them slow each other down badly.
"""

import argparse
import math
from dataclasses import replace
from pathlib import Path

import lightning as L
import torch
from torchmetrics.classification import BinaryAUROC, BinaryF1Score

from benchmarks.common import ROOT, SHARED_DATA, commit_scores, machine, parse_args, write_results
from core.records import split_held_out
from datamodules.loaders import DataConfig
from datamodules.trigger_traces import TriggerTraceDataModule, collate, read_traces
from evaluation.config import AlignerConfig, EvalConfig, KiRAGConfig, MindConfig
from evaluation.report import compare, cost_table, headline_table, markdown_table, significance_table
from evaluation.runner import evaluate
from evaluation.stats import p_text
from models.trigger_calibrator import TriggerCalibrator, attention_key
from models.uncertainty import MindParams, dynamic_threshold, max_rind_score
from training_data.traces import TracesConfig, build_traces, label_counts

RUNS = ROOT / "runs" / "bench" / "mind"
TRAIN = DataConfig("hotpotqa", str(SHARED_DATA / "hotpotqa" / "hipporag_train_100.json"), None)
DEV = DataConfig("ircot", str(SHARED_DATA / "hotpotqa" / "ircot_dev_500.jsonl"), None)
ALIGNER = ROOT / "runs" / "aligner" / "musique" / "checkpoints" / "best.ckpt"
VAL_FRACTION, SEED = 0.2, 0
METHODS = ("fixed_interval", "dragin", "dragin_median", "mind_hand_set", "mind_calibrated", "kirag_mind")

def paths(attention: str) -> tuple[Path, Path]:
    """The traces (both attention kinds) and the calibrated parameters of `attention`."""
    return RUNS / "traces.jsonl", RUNS / f"trigger_{attention}.json"


def calibrate(trace_questions: int, attention: str) -> dict:
    traces, params = paths(attention)
    print("traces:", build_traces(TracesConfig(data=replace(TRAIN, limit=trace_questions), output=str(traces))))
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


def trigger_report(attention: str, learned: MindParams) -> tuple[list[dict], float]:
    """On the held-out traced questions' sentences: AUROC of max S − θ (NaN with one class) and F1 of
    max S > θ, for the calibrated θ, the hand-set one, DRAGIN's median threshold (set on the
    training traces) and fixed-interval retrieval (a θ below every score: fires always, ranks nothing)."""
    traces, _ = paths(attention)
    train, held = split_held_out(read_traces(traces), VAL_FRACTION, SEED)  # the calibration's own split
    median = float(sentence_rows(train, attention)[0].median())
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
    return rows, median


def method_configs(questions: int, attention: str, median: float, calibrated: bool, methods: list[str]
                   ) -> dict[str, EvalConfig]:
    """The configs of `methods`, in table order (fixed interval first: the paired tests' baseline);
    the calibrated methods only when the calibration was written."""
    _, params = paths(attention)
    base = EvalConfig(data=replace(DEV, limit=questions), retriever="bm25", mind=MindConfig(retrieve_k=3, attention=attention),
                      kirag=KiRAGConfig(kg=str(RUNS / "kg")),
                      aligner=AlignerConfig(name=str(ALIGNER)) if ALIGNER.is_file() else AlignerConfig())
    runs = {"fixed_interval": replace(base, method="fixed_interval", name="fixed interval (every sentence)"),
            "dragin": replace(base, method="dragin", name="DRAGIN-style fixed threshold 1.0"),
            "dragin_median": replace(base, method="dragin", mind=replace(base.mind, fixed_threshold=median),
                                     name=f"DRAGIN-style fixed threshold {median:.3g} (median of the traces)"),
            "mind_hand_set": replace(base, method="mind", name="mind, hand-set (α=β=1, γ=1.0, δ=0.2)")}
    if calibrated:
        with_params = replace(base.mind, params=str(params))
        runs["mind_calibrated"] = replace(base, method="mind", mind=with_params, name="mind, calibrated")
        runs["kirag_mind"] = replace(base, method="kirag+mind", mind=with_params, name="kirag+mind, calibrated")
    runs = {key: config for key, config in runs.items() if key == "fixed_interval" or key in methods}
    for key, config in runs.items():
        config.output_dir = str(RUNS / f"{attention}-q{questions}" / key)
    return runs


def main(args: argparse.Namespace) -> None:
    calibration = calibrate(args.trace_questions, args.attention)
    learned = calibration["learned"]
    triggers, median = trigger_report(args.attention, learned)
    configs = method_configs(args.questions, args.attention, median, calibration["written"], args.methods)
    traces, _ = paths(args.attention)
    labels = label_counts(read_traces(traces))
    values = ", ".join(f"{k} {v:.3g}" for k, v in vars(learned).items() if isinstance(v, float))
    verdict = ("calibrated parameters written" if calibration["written"] else
               "the calibrated parameters were degenerate and refused, so no calibrated method ran (see the log)")
    preamble = ("# MIND: when to retrieve\n\n"
                "Split: calibration on HotpotQA hipporag_train_100 (training) traces, its trigger figures on the "
                "held-out fifth of them; every method scored once on the test questions below (HotpotQA dev), "
                "nothing chosen on them.\n\n"
                f"Calibration: closed-book traces of the first {args.trace_questions} HotpotQA hipporag_train_100 "
                f"questions: {labels['sentences']} sentences, {labels['sentences_needing_retrieval']} labelled as "
                f"needing retrieval (per sentence: unsupported or changed claims), {labels['entities']} entities, "
                f"{labels['useful_entities']} useful; {args.attention} attention; learned {values}; {verdict}.\n\n"
                f"## The trigger on held-out traced questions ({VAL_FRACTION:.0%} of them)\n\n"
                + markdown_table(triggers, list(triggers[0])))
    flat = {f"trigger.{row['trigger']}.{k}": v for row in triggers for k, v in row.items() if k != "trigger"}
    flat |= {f"calibrated.{k}": v for k, v in vars(learned).items()} | {f"trace_{k}": v for k, v in labels.items()}
    for until in [*range(args.block, args.questions, args.block), args.questions]:
        for config in configs.values():  # the methods advance side by side
            evaluate(config, until)
        write_table(args, preamble, flat, configs, triggers)  # after every block, on the questions done


def write_table(args: argparse.Namespace, preamble: str, flat: dict, configs: dict[str, EvalConfig],
                triggers: list[dict]) -> None:
    """The calibration's `preamble` and `flat` figures, then the methods side by side on the questions
    done, and what each spends and gains against fixed interval."""
    result = compare([c.output_dir for c in configs.values()],
                     str(RUNS / f"{args.attention}-q{args.questions}" / "compare"))
    commit_scores("mind_eval", {key: c.output_dir for key, c in configs.items()})
    rows, tests = result["runs"], {t["method"]: t for t in result["paired"] if t["metric"] == "f1"}
    fixed = rows[0]
    for row in rows:
        row["calls vs fixed interval"] = row["retrieval_calls"] / max(fixed["retrieval_calls"], 1e-9)
        row["f1 test"] = tests.get(row["method"])
    done = int(fixed["questions"])
    so_far = f" (of a run of {args.questions}, cut short)" if done < args.questions else ""
    labelled = [(row["method"], row) for row in rows]
    markdown = (preamble + f"\n## Retrieval and answers\n\nHotpotQA ircot_dev_500 (dev), first {done} questions{so_far} over "
                "their own context passages; BM25, 3 passages per retrieval; packaged Qwen2.5-Coder-0.5B-Instruct. "
                f"EM, F1 and recall in %, with 95% BCa bootstrap intervals. Machine: {machine()}.\n\n"
                + headline_table(labelled) + "\n### Cost\n\n" + cost_table(labelled)
                + "\n### Paired against fixed interval\n\nSign-flip tests on the same questions, differences in points, "
                f"p adjusted by Holm over the {len(result['paired'])} comparisons.\n\n"
                + significance_table(result["paired"]) + against_fixed_interval(rows, triggers))
    flat = flat | {f"{key}.{c}": v for key, row in zip(configs, rows) for c, v in row.items()
                   if isinstance(v, int | float)}
    flat |= {f"paired.{i}.{field}": value for i, test in enumerate(result["paired"]) for field, value in test.items()}
    write_results("mind_eval", markdown, {"setup": markdown.split("\n\n")[1], **flat})


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


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--trace_questions", type=int, default=100)
    parser.add_argument("--attention", choices=("raw", "sentence"), default="sentence")
    parser.add_argument("--block", type=int, default=10,
                        help="every method answers this many questions before the next block begins")
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=[m for m in METHODS if m != "kirag_mind"],
                        help="the methods to run beside fixed_interval (kirag_mind extracts triples on demand: slow)")
    main(parse_args(parser))
