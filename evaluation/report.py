"""Result tables: one run's `metrics.md`, and `compare`, which puts runs side by side.

Three tables, each column in one number format:
- headline: R@5 with its 95% interval, R@10, EM, F1, retrieval calls and seconds per question;
- cost: what each method spent (passages retrieved and their recall, calls, Constructor fallbacks);
- significance: paired sign-flip tests on the questions both runs scored, their p-values adjusted
  by Holm over the table's family of comparisons; the verdict reads the adjusted p-value.
Figures come from per-question scores (`evaluation.scores`), so a committed scores file reproduces them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from matplotlib.figure import Figure

from core.records import check_output, write_atomic
from evaluation.config import EvalConfig
from evaluation.metrics import RECALL_KS, TESTED
from evaluation.scores import SCORES_NAME, ScoredRun, read_run, write_scores
from evaluation.stats import holm, p_text, paired_test, verdict

MISSING = "–"
PERCENT = ("recall", "answer_in_context", "em", "f1")


def decimals(values: list) -> int:
    """The decimals that give a column's largest float three significant digits (at most 3, at least 0):
    one format for the whole column."""
    largest = max((abs(v) for v in values if isinstance(v, float) and math.isfinite(v)), default=0.0)
    return 3 if largest == 0 else min(3, max(0, 2 - math.floor(math.log10(largest))))


def markdown_table(rows: list[dict], columns: list[str]) -> str:
    """A markdown table, one number format per column: floats named recall/answer_in_context/em/f1 as
    percentages with one decimal, other float columns with the decimals that give their largest value
    three significant digits; None as a dash (missing)."""
    places = {c: decimals([row.get(c) for row in rows]) for c in columns}

    def cell(key, value):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return MISSING
        if isinstance(value, float) and key.split("@")[0] in PERCENT:
            return f"{100 * value:.1f}"
        return f"{value:.{places[key]}f}" if isinstance(value, float) else str(value)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(c, row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _percent(value: float | None) -> str:
    return MISSING if value is None or math.isnan(value) else f"{100 * value:.1f}"


def _with_interval(metrics: dict, name: str) -> str:
    value = metrics.get(name)
    if value is None or f"{name}_low" not in metrics:
        return _percent(value)
    return f"{_percent(value)} ({_percent(metrics[f'{name}_low'])}–{_percent(metrics[f'{name}_high'])})"


def _number(value: float | None) -> str:
    return MISSING if value is None else f"{value:.2f}"


def headline_table(labelled: list[tuple[str, dict]]) -> str:
    """(method, its metrics) rows: questions (and how many have gold passages, which recall averages
    over), R@5 (95% CI), R@10, EM, F1, retrieval calls, s/question."""
    rows = [{"method": method, "questions": str(m["questions"]), "with gold passages": str(m["questions_with_gold"]),
             "R@5 (95% CI)": _with_interval(m, "recall@5"),
             "R@10": _percent(m.get("recall@10")), "EM": _percent(m.get("em")), "F1": _percent(m.get("f1")),
             "retrieval calls": _number(m.get("retrieval_calls")), "s/question": _number(m.get("seconds_per_question"))}
            for method, m in labelled]
    return markdown_table(rows, list(rows[0]))


def cost_table(labelled: list[tuple[str, dict]]) -> str:
    """(method, its metrics) rows: what each spent for its answers (and, where the reader cut passages
    to fit its context, how many a question)."""
    rows = [{"method": method, "passages retrieved": _number(m.get("passages_retrieved")),
             "recall@retrieved": _percent(m.get("recall@retrieved")),
             "answer in top 3": _percent(m.get("answer_in_context@3")),
             "retrieval calls": _number(m.get("retrieval_calls")), "LLM calls": _number(m.get("llm_calls")),
             "Constructor fallbacks": _number(m.get("constructor_fallbacks")),
             "s/question": _number(m.get("seconds_per_question"))} for method, m in labelled]
    if any(m.get("truncated_passages") for _, m in labelled):  # the reader cut passages to fit its context
        for row, (_, m) in zip(rows, labelled):
            row["passages cut for the reader"] = _number(m.get("truncated_passages"))
    return markdown_table(rows, list(rows[0]))


def paired_scores(run: ScoredRun, against: ScoredRun, metric: str) -> tuple[list[float], list[float]]:
    """`against`'s and `run`'s `metric` on the questions where both have it, in `against`'s order."""
    common = [q for q, row in against.scores.items()
              if row.get(metric) is not None and run.scores.get(q, {}).get(metric) is not None]
    return [against.scores[q][metric] for q in common], [run.scores[q][metric] for q in common]


def significance(family: list[tuple[ScoredRun, ScoredRun, str]]) -> list[dict]:
    """Paired tests of (run, against, metric) comparisons, one family: each on the questions where both
    runs have the metric (a comparison with none is left out of the family), its p-value adjusted by
    Holm over the family, and the verdict from the adjusted p-value. Differences are in points."""
    rows = []
    for run, against, metric in family:
        theirs, ours = paired_scores(run, against, metric)
        if not ours:
            continue
        test = paired_test(theirs, ours)
        rows.append({"method": run.method, "against": against.method, "metric": metric, "questions": test.n,
                     "difference": 100 * test.diff, "low": 100 * test.low, "high": 100 * test.high,
                     "p": test.p, "exact": test.exact})
    for row, adjusted in zip(rows, holm([r["p"] for r in rows]), strict=True):
        row["p (Holm)"] = adjusted
        row["verdict"] = verdict(row["difference"], adjusted)
    return rows


def significance_table(rows: list[dict]) -> str:
    shown = [{"method": r["method"], "against": r["against"], "metric": r["metric"], "questions": str(r["questions"]),
              "difference (95% CI)": f"{r['difference']:+.1f} ({r['low']:+.1f}, {r['high']:+.1f})",
              "p": p_text(r["p"]), "p (Holm)": p_text(r["p (Holm)"]), "verdict": r["verdict"]} for r in rows]
    return markdown_table(shown, list(shown[0])) if shown else "No comparison could be made.\n"


def write_report(config: EvalConfig, run: ScoredRun, out: Path) -> dict:
    """`metrics.json`, `metrics.md` and the per-question `scores.jsonl.gz` of one run, and its table on
    stdout; returns the metrics."""
    metrics = run.summary()
    write_atomic(out / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    write_scores(run, out / SCORES_NAME)
    labelled = [(config.label(), metrics)]
    table = headline_table(labelled)
    write_atomic(out / "metrics.md", f"# {config.data.questions}\n\nRecall, EM and F1 in %; 95% BCa bootstrap "
                                     f"interval over questions.\n\n{table}\n{cost_table(labelled)}")
    print(table)
    return metrics


def paired_questions(runs: list[ScoredRun]) -> str:
    """A note on the runs that lack some of the first run's questions (so pair on fewer), or ''; runs
    that share none of them, or that ran over another corpus, are refused."""
    first, notes = runs[0], []
    for run in runs[1:]:
        if run.corpus != first.corpus:
            raise ValueError(f"{run.source} was scored over another corpus than {first.source} (corpus digest "
                             f"{run.corpus} against {first.corpus}): its questions cannot be paired")
        shared = len(first.scores.keys() & run.scores.keys())
        if not shared:
            raise ValueError(f"{run.source} shares no question with {first.source}: nothing can be paired")
        if shared < max(len(first.scores), len(run.scores)):
            notes.append(f"{run.method} ({run.source}) has {len(run.scores)} questions and {first.method} "
                         f"{len(first.scores)}: their paired tests use the {shared} both scored.")
    return " ".join(notes)


def compare(run_paths: list[str], output_dir: str) -> dict[str, list[dict]]:
    """Runs (evaluate.py output folders or scores files) side by side, each tested figure paired against
    the first run: `comparison.md`, `comparison.json` and `recall_at_k.png` in `output_dir`. Returns what
    `comparison.json` holds: `runs` (each run's figures) and `paired` (the tests, Holm-adjusted)."""
    out = check_output(output_dir, is_folder=True)
    runs = [read_run(path) for path in run_paths]
    note = paired_questions(runs)
    summaries = [run.summary() for run in runs]
    labelled = [(run.method, s) for run, s in zip(runs, summaries)]
    tests = significance([(run, runs[0], metric) for run in runs[1:] for metric in TESTED])
    out.mkdir(parents=True, exist_ok=True)
    text = (f"# {', '.join(dict.fromkeys(r.source for r in runs))}\n\nRecall, EM and F1 in %; 95% BCa bootstrap "
            f"interval over questions.\n\n{headline_table(labelled)}\n## Cost\n\n{cost_table(labelled)}")
    if len(runs) > 1:
        text += (f"\n## Paired against {runs[0].method}\n\nSign-flip tests on the questions both scored; "
                 f"differences in points; p adjusted by Holm over the {len(tests)} comparisons of this table. "
                 f"{note}\n\n{significance_table(tests)}")
    write_atomic(out / "comparison.md", text)
    result = {"runs": [{"method": run.method, "source": run.source, **s} for run, s in zip(runs, summaries)],
              "paired": tests}
    write_atomic(out / "comparison.json", json.dumps(result, indent=2) + "\n")
    figure = Figure(figsize=(6, 4))  # drawn straight to a file: no pyplot, no backend switched for the caller
    axes = figure.subplots()
    for run, s in zip(runs, summaries):
        if s.get("recall@1") is not None:  # no gold passages: no recall to draw
            axes.plot(RECALL_KS, [100 * s[f"recall@{k}"] for k in RECALL_KS], marker="o", label=run.method)
    axes.set(xlabel="k (passages)", ylabel="recall@k (%)", xticks=RECALL_KS)
    axes.grid(alpha=0.3)
    if axes.lines:
        axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(out / "recall_at_k.png", dpi=120)
    print(text)
    return result
