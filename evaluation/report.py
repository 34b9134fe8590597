"""Result tables: one run's `metrics.md`, and `compare`, which puts finished runs side by side, each
tested figure with its 95% interval and a paired test against the first run, with a plot of
recall@k against k."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, never a window
import matplotlib.pyplot as plt  # noqa: E402

from core.records import write_atomic  # noqa: E402
from evaluation.config import EvalConfig, read_run_config  # noqa: E402
from datamodules.loaders import Benchmark  # noqa: E402
from evaluation.metrics import CONTEXT_KS, RECALL_KS, TESTED, question_scores  # noqa: E402
from evaluation.predictions import read_predictions  # noqa: E402
from evaluation.stats import p_text, paired_test  # noqa: E402


def markdown_table(rows: list[dict], columns: list[str]) -> str:
    """A markdown table; figures in [0, 1] named recall/em/f1 are shown as percentages."""
    def cell(key, value):
        if isinstance(value, float) and key.split("@")[0] in ("recall", "answer_in_context", "em", "f1"):
            return f"{100 * value:.1f}"
        return f"{value:.3g}" if isinstance(value, float) else str(value)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(c, row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def interval(row: dict, name: str) -> str:
    """A 95% interval kept in a row as `{name}_low` / `{name}_high`, in % like the figure itself."""
    return f"{100 * row[f'{name}_low']:.1f}-{100 * row[f'{name}_high']:.1f}" if f"{name}_low" in row else ""


def report_columns(rows: list[dict]) -> list[str]:
    """The columns of a results table: each tested figure followed by its 95% interval, and (when
    runs are compared) its paired difference from the first run with the test's p-value."""
    columns = ["method", "questions", "questions_with_gold"]
    for k in RECALL_KS:
        columns.append(f"recall@{k}")
        if f"recall@{k}" in TESTED:
            columns.append(f"recall@{k} 95% CI")
    for k in CONTEXT_KS:
        if any(f"answer_in_context@{k}" in r for r in rows):
            columns.append(f"answer_in_context@{k}")
            if f"answer_in_context@{k}" in TESTED:
                columns.append(f"answer_in_context@{k} 95% CI")
    for name in ("em", "f1"):
        if any(name in r for r in rows):
            columns += [name, f"{name} 95% CI"]
    columns += [f"{name} vs first (p)" for name in TESTED if any(f"{name} vs first (p)" in r for r in rows)]
    return columns + ["passages_retrieved", "recall@retrieved", "retrieval_calls", "llm_calls", "seconds_per_question"]


def with_intervals(row: dict) -> dict:
    return row | {f"{name} 95% CI": interval(row, name) for name in TESTED if f"{name}_low" in row}


def write_report(config: EvalConfig, metrics: dict[str, float], out: Path) -> None:
    """`metrics.json` and `metrics.md` of one run, and its table on stdout."""
    write_atomic(out / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    rows = [with_intervals({"method": config.label(), **metrics})]
    table = markdown_table(rows, report_columns(rows))
    write_atomic(out / "metrics.md", f"# {config.data.questions}\n\nRecall, EM and F1 in %.\n\n{table}")
    print(table)


def run_scores(benchmark: Benchmark, run: Path, limit: int | None = None) -> dict[str, dict[str, float]]:
    """Per question id, the scores of a run (its predictions against its data's gold), on its data's
    first `limit` questions when given (those its metrics cover)."""
    predictions = read_predictions(run / "predictions.jsonl")
    questions = [q for q in benchmark.questions[:limit] if q.id in predictions]
    return question_scores(Benchmark(questions, benchmark.passages), [predictions[q.id] for q in questions])


def paired_with(first: dict[str, dict[str, float]], other: dict[str, dict[str, float]]) -> dict:
    """`{name} vs first (p)`: the paired difference (points) from the first run on the questions both
    scored, and its paired-bootstrap p-value; also kept flat as `{name}_diff` / `{name}_p`."""
    out = {}
    for name in TESTED:
        common = [q for q in first if name in first[q] and name in other.get(q, {})]
        if common:
            diff, p = paired_test([first[q][name] for q in common], [other[q][name] for q in common])
            out |= {f"{name}_diff": diff, f"{name}_p": p, f"{name} vs first (p)": f"{100 * diff:+.1f} ({p_text(p)})"}
    return out


def compare(run_dirs: list[str], output_dir: str) -> list[dict]:
    """Runs with metrics side by side: `comparison.md`, `comparison.json` and `recall_at_k.png` in `output_dir`."""
    rows, scores, loaded = [], [], {}
    for run in map(Path, run_dirs):
        run_file, metrics_file = run / "run.json", run / "metrics.json"
        for needed in (run_file, metrics_file):
            if not needed.is_file():
                raise FileNotFoundError(f"{needed} does not exist: {run} is not an evaluate.py run with metrics")
        config, metrics = read_run_config(run_file), json.loads(metrics_file.read_text())
        rows.append(with_intervals({"method": config.label(), "data": config.data.questions, "run": str(run),
                                    **metrics}))
        data = repr(config.data)  # runs on the same data load it once
        loaded[data] = loaded.get(data) or config.data.load()
        scores.append(run_scores(loaded[data], run, int(metrics["questions"])))
    for row, own in zip(rows[1:], scores[1:]):
        row |= paired_with(scores[0], own)
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = markdown_table(rows, report_columns(rows))
    datasets = sorted({"/".join(Path(r["data"]).parts[-2:]) for r in rows})
    write_atomic(out / "comparison.md", f"# {', '.join(datasets)}\n\nRecall, EM and F1 in %.\n\n{table}")
    write_atomic(out / "comparison.json", json.dumps(rows, indent=2) + "\n")
    figure, axes = plt.subplots(figsize=(6, 4))
    for row in rows:
        axes.plot(RECALL_KS, [100 * row[f"recall@{k}"] for k in RECALL_KS], marker="o", label=row["method"])
    axes.set(xlabel="k (passages)", ylabel="recall@k (%)", xticks=RECALL_KS, title=", ".join(datasets))
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(out / "recall_at_k.png", dpi=120)
    plt.close(figure)
    print(table)
    return rows
