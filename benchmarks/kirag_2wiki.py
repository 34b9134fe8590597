"""KiRAG on 2Wiki-101 beside its published peer: fast-graphrag's 2Wiki questions over HippoRAG's corpus.

    python prepare.py kg --config configs/kg/2wiki_fastgraphrag_6119.yaml   # the KG first: hours, resumable
    python -m benchmarks.kirag_2wiki [--aligner runs/aligner/multi/checkpoints/best.ckpt]

The questions are fast-graphrag's 2WikiMultiHopQA benchmark (76 distinct questions in the shared file),
searched over the 6,119 passages of HippoRAG's 2Wiki corpus. The file has no gold answers, so this is
retrieval only: R@2 and R@5 over the gold titles, with 95% BCa intervals, and the share of questions with
every gold passage in the top 5 (fast-graphrag's "perfect retrieval", at 5). A question that is also in
`2wiki/hoprag_10.jsonl`, the Aligner's only 2Wiki training data, is left out.

Methods, none with a reader:
- KiRAG Aligner-only (K0 = 10, N = 20, L = 5) with the base MiniLM and with the trained Aligner, searching
  with the retriever and ranking passages as chosen on validation questions (kirag_validation.md); its
  budget B is the distinct passages the trained loop retrieved per question;
- `rag` (k = B) and hybrid BM25+dense by reciprocal rank (k = B), as in kirag_eval;
- the peer: the vector-DB retrieval fast-graphrag published for these questions (the file's `evidence`
  field, 8 titles a question), read from the file, not rerun.

Trained KiRAG is tested against each other row on R@2 and R@5 (paired sign-flip, Holm over the family).
Runs resume. Each run's scores and `run.json` are committed under benchmarks/results/kirag_2wiki/, and a
rerun reads a committed run back when the same config made it over the same inputs, so the table
regenerates without the KG or the LM.
"""

import argparse
import json
from dataclasses import replace
from datetime import date
from pathlib import Path

from benchmarks.common import (RESULTS, ROOT, SHARED_DATA, commit_scores, committed_runs, machine, parse_args,
                               write_results)
from benchmarks.kirag_eval import choices, require_kg, retriever_marks, trained_aligner, write_held_out
from benchmarks.retrieval_baselines import peer_predictions
from core.text import normalize_space
from datamodules.loaders import Benchmark, DataConfig
from evaluation.config import AlignerConfig, EvalConfig, KiRAGConfig
from evaluation.report import markdown_table, significance, significance_table
from evaluation.runner import evaluate
from evaluation.scores import ScoredRun, read_run, scored_run, write_scores
from evaluation.stats import interval
from inference.kirag_ranking import RankingConfig

NAME = "kirag_2wiki"
TWOWIKI = SHARED_DATA / "2wiki"
DATA = DataConfig("plain", str(TWOWIKI / "fastgraphrag_101_questions.json"), str(TWOWIKI / "hipporag_corpus_6119.json"),
                  str(TWOWIKI / "fastgraphrag_101_gold_titles.json"))
TRAINED_ON = TWOWIKI / "hoprag_10.jsonl"
KG = "runs/kg/2wiki_fastgraphrag_6119"
KG_CONFIG = "configs/kg/2wiki_fastgraphrag_6119.yaml"
RUNS = ROOT / "runs" / "bench" / NAME  # main adds <training run folder>-<checkpoint digest>
PEER = "peer: fast-graphrag's vector DB (the file's evidence)"
BASELINES = ("rag at budget", "hybrid", "peer", "kirag base")


def questions(data: DataConfig, trained_on: Path, out: Path) -> tuple[DataConfig, Benchmark, int]:
    """`data`'s questions less those whose text is in `trained_on`, written as unified data under `out`;
    with the benchmark as loaded (for the peer's titles) and the number left out."""
    benchmark = data.load()
    seen = {normalize_space(json.loads(line)["question"]).lower()
            for line in trained_on.read_text().splitlines() if line.strip()}
    kept = Benchmark([q for q in benchmark.questions if normalize_space(q.question).lower() not in seen],
                     benchmark.passages)
    return write_held_out(kept, out), kept, len(benchmark.questions) - len(kept.questions)


def configs(data: DataConfig, trained: str, ranking: RankingConfig, budget: int | None = None,
            retriever: str = "dense") -> dict[str, EvalConfig]:
    """The runs in table order, KiRAG's over `retriever`; without `budget` only the trained loop, which sets it."""
    base = EvalConfig(data=data, retriever="dense")
    kirag = replace(base, method="kirag", retriever=retriever,
                    kirag=KiRAGConfig(kg=str(ROOT / KG), extract_missing=False, ranking=ranking))
    over, suffix = retriever_marks(retriever)
    runs = {"kirag trained": replace(kirag, aligner=AlignerConfig(name=trained),
                                     name=f"kirag aligner-only, trained{over}")}
    if budget is not None:
        runs |= {
            "kirag base": replace(kirag, name=f"kirag aligner-only, base MiniLM{over}"),
            "rag at budget": replace(base, method="rag", top_k=budget, name=f"rag (dense, k = {budget})"),
            "hybrid": replace(base, method="rag", retriever="hybrid", top_k=budget,
                              name=f"hybrid BM25+dense (k = {budget})"),
        }
    for key, config in runs.items():
        config.output_dir = str(RUNS / (key.replace(" ", "_") + (suffix if config.method == "kirag" else "")))
    return runs


def scored(configs: dict[str, EvalConfig], count: int) -> dict[str, ScoredRun]:
    """Each run read back from benchmarks/results/ when committed by the same config, else run (or resumed)."""
    committed = committed_runs(NAME, configs, count)
    runs = {}
    for key, config in configs.items():
        if key not in committed:
            if config.method == "kirag":
                require_kg(NAME, ROOT / KG, KG_CONFIG, config.data)
            evaluate(config)
        runs[key] = read_run(committed.get(key, config.output_dir))
    return runs


def row(run: ScoredRun, summary: dict) -> dict:
    """The run's cells of the table; `summary` is its `summary()`, which gives R@5's interval (R@2's is drawn here)."""
    cells = {"method": run.method, "questions": len(run.scores)}
    bounds = {2: interval([s["recall@2"] for s in run.scores.values() if s["recall@2"] is not None]),
              5: (summary["recall@5_low"], summary["recall@5_high"])}
    for k, (low, high) in bounds.items():
        cells[f"R@{k}"] = f"{100 * summary[f'recall@{k}']:.1f} ({100 * low:.1f}–{100 * high:.1f})"
    complete = [s["recall@5"] == 1.0 for s in run.scores.values() if s["recall@5"] is not None]
    cells["all gold in top 5"] = f"{100 * sum(complete) / len(complete):.1f}"
    for name in ("passages_retrieved", "retrieval_calls"):
        cells[name.replace("_", " ")] = "–" if summary.get(name) is None else f"{summary[name]:.2f}"
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--aligner", type=Path, default=ROOT / "runs/aligner/multi/checkpoints/best.ckpt",
                        help="the trained Aligner's checkpoint")
    args = parse_args(parser)
    global RUNS
    trained, RUNS, aligner = trained_aligner(args.aligner, RUNS)
    chosen = choices(aligner)
    ranking = chosen.ranking
    data, benchmark, left_out = questions(DATA, TRAINED_ON, RUNS / "questions")
    count = len(benchmark.questions)
    first = scored(configs(data, str(trained), ranking, retriever=chosen.retriever), count)
    budget = round(first["kirag trained"].summary()["passages_retrieved"])
    runs = first | scored({k: c for k, c in configs(data, str(trained), ranking, budget, chosen.retriever).items()
                           if k not in first}, count)
    runs["peer"] = scored_run(PEER, benchmark, peer_predictions(benchmark, Path(DATA.gold_titles)))
    commit_scores(NAME, {key: run.source for key, run in runs.items() if key != "peer"})
    write_scores(runs["peer"], RESULTS / NAME / "peer.jsonl.gz")
    trained_run = runs["kirag trained"]
    tests = significance([(trained_run, runs[b], f"recall@{k}") for b in BASELINES for k in (2, 5)])
    summaries = {key: run.summary() for key, run in runs.items()}
    rows = [row(runs[key], summaries[key]) for key in ("kirag trained", *BASELINES)]
    flat = {"aligner": aligner, "run": f"{date.today()}, {machine()}", "budget": budget, "questions": count,
            "left out": left_out}
    for key, summary in summaries.items():
        flat |= {f"{key}.{name}": value for name, value in summary.items()}
    flat |= {f"paired.{i}.{name}": value for i, test in enumerate(tests) for name, value in test.items()}
    text = (f"# KiRAG on 2Wiki-101 beside its published peer\n\nfast-graphrag's 2WikiMultiHopQA questions ({count} "
            f"scored; {left_out} left out, being in the Aligner's 2Wiki training file) over HippoRAG's 6,119-passage "
            f"2Wiki corpus; every figure stands on these questions, which chose nothing. Aligner: {aligner}. Run "
            f"{flat['run']}. Dense MiniLM retrieval but for hybrid and KiRAG, no reader (the file has no answers). "
            f"KiRAG: K0 = 10, N = 20, L = 5, the {chosen.retriever} retriever and the passage ranking chosen on "
            f"validation (kirag_validation.md: w_t {ranking.triple_weight:g}, "
            f"w_r {ranking.retrieval_weight:g}, w_x {ranking.text_weight:g}); its budget B = {budget} passages. The "
            "peer is the retrieval fast-graphrag published for these questions (8 titles each), read from the file. "
            "Recall in %, with 95% BCa bootstrap intervals over questions.\n\n" + markdown_table(rows, list(rows[0]))
            + "\n## Significance: trained KiRAG against each row\n\nPaired sign-flip tests, p adjusted by Holm over "
            "the family.\n\n" + significance_table(tests)
            + f"\nPer-question scores and run configs: `benchmarks/results/{NAME}/`.\n")
    write_results(NAME, text, flat)


if __name__ == "__main__":
    main()
