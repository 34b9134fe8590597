"""MIND's claim, tested: fewer retrieval calls than fixed-interval retrieval at equal or better EM/F1.

    python benchmarks/mind_eval.py [--questions 6] [--trace_questions 20] [--jobs 2] [--threads 2]

Evaluated: the first `--questions` questions of hotpotqa/hipporag_train_100 over their own context
passages, with BM25 (as in MIND's paper), 3 passages per retrieval, the packaged LM:
- `fixed_interval`: retrieve at every sentence;
- `dragin`: a fixed RIND threshold, θ = 1.0, and θ = the median max S of the calibration traces'
  sentences (set on training questions; it fires on half of the closed-book sentences);
- `mind` with hand-set values (α = β = 1, γ = 1.0, δ = 0.2, CoT+confidence filter, top 2 entities);
- `mind` calibrated: α, β, γ, δ and the entity threshold learned by `TriggerCalibrator` from
  closed-book traces of OTHER HotpotQA questions (from question 50 on, never evaluated);
- `kirag+mind` (calibrated): MIND's trigger, KiRAG's Aligner-only loop as the retriever, over the
  project's triples of the same passages (python prepare.py kg --config configs/kg/hotpotqa_train_6.yaml)
  and the Aligner trained on MuSiQue (configs/aligner/shared_cpu.yaml) when present.

Everything resumes: traces and predictions are appended as they are made. With `--jobs 2` the methods
that need no calibration run in a second process, beside calibration and the calibrated methods, each
process on `threads / jobs` torch threads.
"""

import argparse
import json
import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lightning as L  # noqa: E402
import torch  # noqa: E402

from benchmarks.common import ROOT, SHARED_DATA, machine, parse_args, write_results  # noqa: E402
from datamodules.loaders import DataConfig  # noqa: E402
from datamodules.trigger_traces import TriggerTraceDataModule, read_traces  # noqa: E402
from evaluation.config import AlignerConfig, EvalConfig, KiRAGConfig, MindConfig  # noqa: E402
from evaluation.metrics import RECALL_KS  # noqa: E402
from evaluation.report import compare, markdown_table  # noqa: E402
from evaluation.runner import evaluate  # noqa: E402
from models.trigger_calibrator import TriggerCalibrator  # noqa: E402
from training_data.traces import TracesConfig, build_traces, label_counts  # noqa: E402

RUNS = ROOT / "runs" / "bench" / "mind"
HOTPOTQA = SHARED_DATA / "hotpotqa" / "hipporag_train_100.json"
KG = ROOT / "runs" / "kg" / "hotpotqa_train_6"
ALIGNER = ROOT / "runs" / "aligner" / "musique" / "checkpoints" / "last.ckpt"
PARAMS = RUNS / "trigger.json"
TRACES = RUNS / "traces.jsonl"
# The first group calibrates, then runs the calibrated methods; the second starts with the methods
# that need nothing from calibration and waits for it before `dragin_median`.
GROUPS = (("mind_calibrated", "kirag_mind"), ("fixed_interval", "dragin", "mind_hand_set", "dragin_median"))


def calibrate(trace_questions: int) -> None:
    """Closed-book traces of questions 50.. and the calibrated parameters (`trigger.json`)."""
    data = DataConfig("hotpotqa", str(HOTPOTQA), None, limit=trace_questions, offset=50)
    print("traces:", build_traces(TracesConfig(data=data, output=str(TRACES))))
    model = TriggerCalibrator(cost=0.05, params_path=str(PARAMS))
    trainer = L.Trainer(max_epochs=100, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        accelerator="cpu", deterministic=True)
    L.seed_everything(0)
    trainer.fit(model, TriggerTraceDataModule(str(TRACES), val_fraction=0.2, batch_size=8))
    print("calibrated:", model.params(), {k: float(v) for k, v in trainer.callback_metrics.items()})


def median_max_score() -> float:
    """The median over the calibration traces' sentences of max S = H·maxAttn·s: a DRAGIN threshold
    set on training questions, where it fires on half of the closed-book sentences."""
    scores = [max(h * a * c for h, a, c in zip(s["entropy"], s["attention"], s["content"]))
              for trace in read_traces(TRACES) for s in trace["sentences"]]
    return float(torch.tensor(scores).median())


def method_configs(questions: int) -> dict[str, EvalConfig]:
    """Every method's config, in table order; `dragin_median` only once the calibration traces exist."""
    data = DataConfig("hotpotqa", str(HOTPOTQA), None, limit=questions)
    aligner = AlignerConfig(name=str(ALIGNER)) if ALIGNER.is_file() else AlignerConfig()
    base = EvalConfig(data=data, retriever="bm25", kirag=KiRAGConfig(kg=str(KG)),
                      aligner=aligner, mind=MindConfig(retrieve_k=3))
    calibrated = replace(base.mind, params=str(PARAMS))
    runs = {"fixed_interval": replace(base, method="fixed_interval", name="fixed interval (every sentence)"),
            "dragin": replace(base, method="dragin", name="DRAGIN-style fixed threshold 1.0")}
    if TRACES.is_file():
        threshold = median_max_score()
        runs["dragin_median"] = replace(base, method="dragin", mind=replace(base.mind, fixed_threshold=threshold),
                                        name=f"DRAGIN-style fixed threshold {threshold:.3g} (median of the traces)")
    runs |= {
        "mind_hand_set": replace(base, method="mind", name="mind, hand-set (α=β=1, γ=1.0, δ=0.2)"),
        "mind_calibrated": replace(base, method="mind", mind=calibrated, name="mind, calibrated"),
        "kirag_mind": replace(base, method="kirag+mind", mind=calibrated, name="kirag+mind, calibrated"),
    }
    for key, config in runs.items():
        config.output_dir = str(RUNS / key)
    return runs


def run_group(keys: tuple[str, ...], args: argparse.Namespace, threads: int, calibrated) -> None:
    """The first group calibrates and sets `calibrated` (an Event); each method resumes where it stopped."""
    torch.set_num_threads(threads)
    if keys == GROUPS[0]:
        try:
            calibrate(args.trace_questions)
        finally:  # never leave the other group waiting
            calibrated.set()
    configs = method_configs(args.questions)
    for key in keys:
        if key == "dragin_median":
            calibrated.wait()
            configs = method_configs(args.questions)  # now with the traces' threshold
        evaluate(configs[key])


def main(args: argparse.Namespace) -> None:
    threads = max(1, torch.get_num_threads() // args.jobs)
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
        calibrated = manager.Event()
        for future in [pool.submit(run_group, group, args, threads, calibrated) for group in GROUPS]:
            future.result()
    configs = method_configs(args.questions)
    rows = compare([c.output_dir for c in configs.values()], str(RUNS / "compare"))
    columns = ["method", "questions", "em", "f1"] + [f"recall@{k}" for k in RECALL_KS] + [
        "retrieval_calls", "llm_calls", "seconds_per_question"]
    fixed = rows[0]
    for row in rows:
        row["retrieval calls vs fixed interval"] = row["retrieval_calls"] / max(fixed["retrieval_calls"], 1e-9)
    columns.append("retrieval calls vs fixed interval")
    labels = label_counts(read_traces(TRACES))
    params = json.loads(PARAMS.read_text())
    calibration = {**{f"trace_{k}": v for k, v in labels.items()}, **{f"calibrated.{k}": v for k, v in params.items()}}
    markdown = ("# MIND: when to retrieve\n\n"
                f"HotpotQA hipporag_train_100, first {args.questions} questions over their context passages; BM25, "
                f"3 passages per retrieval; packaged Qwen2.5-Coder-0.5B-Instruct. Calibration traces: "
                f"{args.trace_questions} other questions (from question 50), {labels['sentences']} sentences of which "
                f"{labels['sentences_needing_retrieval']} are labelled as needing retrieval, {labels['entities']} "
                f"entities of which {labels['useful_entities']} are useful; calibrated " + ", ".join(f"{k} {v:.3g}" for k, v in params.items())
                + ". EM, F1 and recall in %. "
                f"{args.jobs} processes of {threads} torch threads; seconds per question are each process's own. "
                f"Machine: {machine()}.\n\n" + markdown_table(rows, columns))
    flat = {f"{key}.{c}": row[c] for key, row in zip(configs, rows) for c in columns[1:] if c in row}
    write_results("mind_eval", markdown, {"setup": markdown.split("\n\n")[1], **calibration, **flat})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=6)
    parser.add_argument("--trace_questions", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2, choices=(1, 2),
                        help="2: the uncalibrated methods run in a second process, beside calibration")
    main(parse_args(parser))
