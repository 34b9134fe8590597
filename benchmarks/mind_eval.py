"""MIND's claim, tested: fewer retrieval calls than fixed-interval retrieval at equal or better EM/F1.

    python benchmarks/mind_eval.py [--questions 6] [--trace_questions 30] [--threads 1]

Evaluated: the first `--questions` questions of hotpotqa/hipporag_train_100 over their own context
passages, with BM25 (as in MIND's paper), 3 passages per retrieval, the packaged LM:
- `fixed_interval`: retrieve at every sentence;
- `dragin`: a fixed RIND threshold (θ = 1.0);
- `mind` with hand-set values (α = β = 1, γ = 1.0, δ = 0.2, CoT+confidence filter, top 2 entities);
- `mind` calibrated: α, β, γ, δ and the entity threshold learned by `TriggerCalibrator` from
  closed-book traces of OTHER HotpotQA questions (from question 50 on, never evaluated);
- `kirag+mind` (calibrated): MIND's trigger, KiRAG's Aligner-only loop as the retriever, over the
  project's triples of the same passages (python prepare.py kg --config configs/kg/hotpotqa_train_6.yaml)
  and the Aligner trained on MuSiQue (configs/aligner/shared_cpu.yaml) when present.

Everything resumes: traces and predictions are appended as they are made.
"""

import argparse
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lightning as L  # noqa: E402

from benchmarks.common import ROOT, SHARED_DATA, machine, parse_args, write_results  # noqa: E402
from datamodules.loaders import DataConfig  # noqa: E402
from datamodules.trigger_traces import TriggerTraceDataModule, collect_traces  # noqa: E402
from evaluate import RECALL_KS, AlignerConfig, EvalConfig, KiRAGConfig, MindConfig, compare, evaluate  # noqa: E402
from evaluate import markdown_table  # noqa: E402
from inference.mind import MindRAG  # noqa: E402
from models.lm import LMConfig  # noqa: E402
from models.trigger_calibrator import TriggerCalibrator  # noqa: E402

RUNS = ROOT / "runs" / "bench" / "mind"
HOTPOTQA = SHARED_DATA / "hotpotqa" / "hipporag_train_100.json"
KG = ROOT / "runs" / "kg" / "hotpotqa_train_6"
ALIGNER = ROOT / "runs" / "aligner" / "musique" / "checkpoints" / "last.ckpt"


def calibrate(trace_questions: int) -> Path:
    """Closed-book traces of questions 50.. and the calibrated parameters (`trigger.json`)."""
    data = DataConfig("hotpotqa", str(HOTPOTQA), None, limit=trace_questions, offset=50)
    benchmark = data.load()
    passages = benchmark.passage_by_id()
    mind = MindRAG(LMConfig().build(), None, trigger="never", record_signals=True)
    traces = RUNS / "traces.jsonl"
    collect_traces(mind, benchmark.questions, passages, traces)
    params = RUNS / "trigger.json"
    model = TriggerCalibrator(cost=0.05, params_path=str(params))
    trainer = L.Trainer(max_epochs=100, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        accelerator="cpu", deterministic=True)
    L.seed_everything(0)
    trainer.fit(model, TriggerTraceDataModule(str(traces), val_fraction=0.2, batch_size=8))
    print("calibrated:", model.params(), {k: float(v) for k, v in trainer.callback_metrics.items()})
    return params


def main(args: argparse.Namespace) -> None:
    params = calibrate(args.trace_questions)
    data = DataConfig("hotpotqa", str(HOTPOTQA), None, limit=args.questions)
    aligner = AlignerConfig(name=str(ALIGNER)) if ALIGNER.is_file() else AlignerConfig()
    base = EvalConfig(data=data, retriever="bm25", kirag=KiRAGConfig(kg=str(KG)),
                      aligner=aligner, mind=MindConfig(retrieve_k=3))
    runs = {
        "fixed_interval": replace(base, method="fixed_interval", name="fixed interval (every sentence)"),
        "dragin": replace(base, method="dragin", name="DRAGIN-style fixed threshold 1.0"),
        "mind_hand_set": replace(base, method="mind", name="mind, hand-set (α=β=1, γ=1.0, δ=0.2)"),
        "mind_calibrated": replace(base, method="mind", mind=replace(base.mind, params=str(params)),
                                   name="mind, calibrated"),
        "kirag_mind": replace(base, method="kirag+mind", mind=replace(base.mind, params=str(params)),
                              name="kirag+mind, calibrated"),
    }
    rows = []
    for key, config in runs.items():
        config.output_dir = str(RUNS / key)
        rows.append({"method": config.name, **evaluate(config)})
    compare([c.output_dir for c in runs.values()], str(RUNS / "compare"))
    columns = ["method", "questions", "em", "f1"] + [f"recall@{k}" for k in RECALL_KS] + [
        "retrieval_calls", "llm_calls", "seconds_per_question"]
    fixed = rows[0]
    for row in rows:
        row["retrieval calls vs fixed interval"] = row["retrieval_calls"] / max(fixed["retrieval_calls"], 1e-9)
    columns.append("retrieval calls vs fixed interval")
    markdown = ("# MIND: when to retrieve\n\n"
                f"HotpotQA hipporag_train_100, first {args.questions} questions over their context passages; BM25, "
                f"3 passages per retrieval; packaged Qwen2.5-Coder-0.5B-Instruct. Calibration traces: "
                f"{args.trace_questions} other questions (from question 50). EM, F1 and recall in %. "
                f"Machine: {machine()}.\n\n" + markdown_table(rows, columns))
    flat = {f"{key}.{c}": row[c] for key, row in zip(runs, rows) for c in columns[1:] if c in row}
    write_results("mind_eval", markdown, {"setup": markdown.split("\n\n")[1], **flat})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=6)
    parser.add_argument("--trace_questions", type=int, default=30)
    main(parse_args(parser))
