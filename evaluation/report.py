"""Result tables: one run's `metrics.md`, and `compare`, which puts finished runs side by side with a
plot of recall@k against k."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, never a window
import matplotlib.pyplot as plt  # noqa: E402

from core.records import write_atomic  # noqa: E402
from evaluation.config import EvalConfig, read_run_config  # noqa: E402
from evaluation.metrics import RECALL_KS  # noqa: E402


def markdown_table(rows: list[dict], columns: list[str]) -> str:
    """A markdown table; figures in [0, 1] named recall/em/f1 are shown as percentages."""
    def cell(key, value):
        if isinstance(value, float) and key.split("@")[0] in ("recall", "em", "f1"):
            return f"{100 * value:.1f}"
        return f"{value:.3g}" if isinstance(value, float) else str(value)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(c, row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def report_columns(rows: list[dict]) -> list[str]:
    columns = ["method", "questions", "questions_with_gold"] + [f"recall@{k}" for k in RECALL_KS]
    columns += [c for c in ("em", "f1") if any(c in r for r in rows)]
    return columns + ["retrieval_calls", "llm_calls", "seconds_per_question"]


def write_report(config: EvalConfig, metrics: dict[str, float], out: Path) -> None:
    """`metrics.json` and `metrics.md` of one run, and its table on stdout."""
    write_atomic(out / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    rows = [{"method": config.label(), **metrics}]
    table = markdown_table(rows, report_columns(rows))
    write_atomic(out / "metrics.md", f"# {config.data.questions}\n\nRecall, EM and F1 in %.\n\n{table}")
    print(table)


def compare(run_dirs: list[str], output_dir: str) -> list[dict]:
    """Finished runs side by side: `comparison.md`, `comparison.json` and `recall_at_k.png` in `output_dir`."""
    rows = []
    for run in map(Path, run_dirs):
        run_file, metrics_file = run / "run.json", run / "metrics.json"
        for needed in (run_file, metrics_file):
            if not needed.is_file():
                raise FileNotFoundError(f"{needed} does not exist: {run} is not a finished evaluate.py run")
        config = read_run_config(run_file)
        rows.append({"method": config.label(), "data": config.data.questions, "run": str(run),
                     **json.loads(metrics_file.read_text())})
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
