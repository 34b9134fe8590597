"""KiRAG against single-shot dense retrieval on held-out MuSiQue questions and HotpotQA.

    python benchmarks/kirag_eval.py [--parts musique musique_own hotpotqa hotpotqa_ircot hotpotqa_ircot_full]
        [--constructor_questions N]

Methods, all over the same dense MiniLM retriever (K0 = 10, N = 20, L = 5), all answered by the
packaged Qwen2.5-0.5B reader from their top 3 passages (but one, below):
- `rag`: one retrieval with the question;
- budget-matched baselines: `rag` with k = the distinct passages the trained Aligner-only loop
  retrieved per question (compare its recall@retrieved, the recall of everything retrieved; it has
  no reader, whose answers from its top 3 would be `rag`'s), and
  `rag+rerank`: one query for K0·L passages, ranked by the trained Aligner's best triple of each;
- `kirag aligner-only`, with the untrained base encoder (MiniLM) and with the trained Aligner;
- `kirag constructor`: the trained Aligner and the packaged LM (the default backend: llama.cpp on a
  CPU) as Constructor, on every question (or the first `--constructor_questions`; the other methods
  are then also reported on those same questions).
Every figure has its 95% bootstrap interval, and every method a paired test against `rag` on the
same questions; the hop-count composition of each question set is reported.

The trained Aligner (`--aligner`, default the MuSiQue one below) is a checkpoint of the best
validation MRR (`best.ckpt`). Each part (`--parts`) evaluates questions the Aligner never trained on:
the test split of the part's dataset when the Aligner trained on it, rebuilt from the data settings
saved in the checkpoint; otherwise the part's first `--unseen_questions` (100), checked to be none of
the questions the Aligner's chains files hold. Each part's KG must cover its whole corpus:
- `musique`: the 50 MuSiQue test questions of hipporag_train_100 (`test_fraction` 0.5: a seeded random
  half, drawn before incomplete chains were dropped; the same 50 for shared_cpu.yaml and
  multi_cpu.yaml) over the gpt-3.5 triples. It needs:
    python prepare.py kg --config configs/kg/musique_gpt35.yaml
    python prepare.py chains --config configs/chains/musique_gpt35.yaml
    python train.py fit --config configs/aligner/shared_cpu.yaml      # checkpoints/best.ckpt is used
- `musique_own`: the same questions and corpus over this project's own triples (packaged LM):
    python prepare.py kg --config configs/kg/musique_train_100.yaml
- `hotpotqa`: hipporag_train_100 questions over the whole train-100 corpus (994 passages) with this
  project's own triples (`python prepare.py kg --config configs/kg/hotpotqa_train_100.yaml`, restored
  from its committed archive): the `hotpotqa` test split of an Aligner trained on it
  (configs/aligner/multi_cpu.yaml).
    python benchmarks/kirag_eval.py --aligner runs/aligner/multi/checkpoints/best.ckpt
- `hotpotqa_ircot`: the first 100 questions of ircot_dev_500 (HotpotQA dev; multi_cpu.yaml trains on
  questions 101-500 only and tests on these, its `hotpotqa_ircot_dev_100` dataset) over the union of
  their contexts (1,000 passages), this project's triples:
    python prepare.py kg --config configs/kg/hotpotqa_ircot_dev_100.yaml
- `hotpotqa_ircot_full`: the same 100 questions over the whole corpus of the 500 (4,858 passages), closer to
  the paper's open-corpus setting: the contexts of questions 101-500 are distractors. Its KG is the one the
  Aligner's ircot training chains were built over (their negatives come from it, their positives only from
  the gold passages of questions 101-500):
    python prepare.py kg --config configs/kg/hotpotqa_ircot_dev_500.yaml

Every run goes through `evaluation.runner` (what `evaluate.py` calls) and resumes: a rerun only
recomputes the timing. Runs go to runs/bench/kirag/<training run folder>-<the checkpoint's content
digest>, so a checkpoint retrained at the same path starts new runs. The results keep the sections of
parts not in `--parts` from the last results, each naming its checkpoint, so parts can be added one
at a time. The timing part measures, on warm caches and without the reader, seconds per question of
the Aligner-only loop, of single-shot retrieval, and of encoding the loop's own queries (one per
step, by the retriever's encoder and by the Aligner) without anything else.
"""

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

import numpy as np

from benchmarks.common import RESULTS, ROOT, SHARED_DATA, machine, parse_args, trained_datamodule, write_results
from core.records import content_digest
from datamodules.loaders import Benchmark, DataConfig, write_unified
from evaluation.config import AlignerConfig, EvalConfig, KiRAGConfig, ReaderConfig
from evaluation.factory import build_method
from evaluation.metrics import RECALL_KS, compute_metrics
from evaluation.predictions import read_predictions
from evaluation.report import compare, markdown_table, paired_with, run_scores, with_intervals
from evaluation.runner import evaluate
from evaluation.stats import paired_test
from kg.store import KGStore

TRAINED = ROOT / "runs" / "aligner" / "musique" / "checkpoints" / "best.ckpt"  # `--aligner`: the best validation MRR
RUNS: Path  # set by main: runs/bench/kirag/<training run folder>-<checkpoint digest>
MUSIQUE = DataConfig("musique", str(SHARED_DATA / "musique" / "hipporag_train_100.json"),
                     str(SHARED_DATA / "musique" / "hipporag_train_100_corpus.json"))
HOTPOTQA = DataConfig("hotpotqa", str(SHARED_DATA / "hotpotqa" / "hipporag_train_100.json"),
                      str(SHARED_DATA / "hotpotqa" / "hipporag_train_100_corpus.json"))
# all 500 questions over the union of their contexts; the part keeps the Aligner's test questions (the first 100)
IRCOT_ALL = DataConfig("ircot", str(SHARED_DATA / "hotpotqa" / "ircot_dev_500.jsonl"))
# the first 100 questions over their contexts: the corpus of its KG and of the Aligner's test-only dataset
IRCOT = replace(IRCOT_ALL, limit=100)


@dataclass(frozen=True)
class Part:
    """Questions and corpus (`data`), the KG over that corpus and the config that builds it, and the
    dataset of the Aligner whose test split is evaluated when the Aligner trained on it."""

    data: DataConfig
    kg: str
    kg_config: str
    dataset: str
    about: str


PARTS = {
    "musique": Part(MUSIQUE, "runs/kg/musique", "configs/kg/musique_gpt35.yaml", "musique",
                    "MuSiQue hipporag_train_100, gpt-3.5 triples"),
    "musique_own": Part(MUSIQUE, "runs/kg/musique_train_100", "configs/kg/musique_train_100.yaml", "musique",
                        "MuSiQue hipporag_train_100, this project's triples (packaged LM)"),
    "hotpotqa": Part(HOTPOTQA, "runs/kg/hotpotqa_train_100", "configs/kg/hotpotqa_train_100.yaml", "hotpotqa",
                     "HotpotQA hipporag_train_100 over the whole train-100 corpus, this project's triples"),
    "hotpotqa_ircot": Part(IRCOT, "runs/kg/hotpotqa_ircot_dev_100", "configs/kg/hotpotqa_ircot_dev_100.yaml",
                           "hotpotqa_ircot_dev_100", "HotpotQA ircot_dev_500 (dev) over the contexts of the "
                           "questions evaluated, this project's triples"),
    "hotpotqa_ircot_full": Part(IRCOT_ALL, "runs/kg/hotpotqa_ircot_dev_500_full",
                                "configs/kg/hotpotqa_ircot_dev_500.yaml", "hotpotqa_ircot_dev_100",
                                "HotpotQA ircot_dev_500 (dev), the same questions as hotpotqa_ircot over the "
                                "whole corpus of the 500 questions (4,858 passages), this project's triples"),
}
COLUMNS = ["questions set", "method", "questions"] + [f"recall@{k}" for k in RECALL_KS] + [
    "recall@5 95% CI", "answer_in_context@3", "answer_in_context@3 95% CI", "answer_in_context@5", "em", "em 95% CI",
    "f1", "f1 95% CI", "recall@5 vs first (p)", "answer_in_context@3 vs first (p)", "em vs first (p)",
    "f1 vs first (p)", "passages_retrieved", "recall@retrieved", "retrieval_calls", "constructor_fallbacks",
    "llm_calls", "seconds_per_question"]


def evaluated_questions(name: str, data, unseen_questions: int) -> DataConfig:
    """The questions of part `name` the Aligner (`data`: its AlignerDataModule) never trained on, written in
    unified format: the test split of the part's dataset when the Aligner trained on it, else the part's
    first `unseen_questions`, refused when the Aligner's chains files hold any of them."""
    part = PARTS[name]
    if part.dataset in data.test_ids:
        test = set(data.test_ids[part.dataset])
        benchmark = part.data.load()
        questions = [q for q in benchmark.questions if q.id in test]
        if len(questions) < len(test):
            sys.exit(f"{name}: {len(test) - len(questions)} of the {len(test)} test questions of {part.dataset} are "
                     f"not among the {len(benchmark.questions)} of {part.data.questions} this part loads")
    else:
        benchmark = replace(part.data, limit=unseen_questions).load()
        seen = {r.question_id for r in data.train_records + data.val_records} | {
            q for ids in data.test_ids.values() for q in ids}
        if overlap := [q.id for q in benchmark.questions if q.id in seen]:
            sys.exit(f"{name}: {len(overlap)} of the first {unseen_questions} questions of {part.data.questions} "
                     f"are in the chains files {TRAINED} was trained with (first: {overlap[0]}); it has no test "
                     f"split of {part.dataset} to evaluate instead")
        questions = benchmark.questions
    out = write_unified(Benchmark(questions, benchmark.passages), RUNS / f"{name}_held_out")
    return DataConfig("unified", str(out / "questions.jsonl"), str(out / "passages.jsonl"))


def configs(part: str, data: DataConfig, constructor_questions: int | None, budget: int | None = None
            ) -> dict[str, EvalConfig]:
    """The methods in table order; with `budget` (the passages the Aligner-only loop retrieved per
    question), the baselines that get the same budget."""
    base = EvalConfig(data=data, retriever="dense", reader=ReaderConfig(enabled=True),
                      kirag=KiRAGConfig(kg=str(ROOT / PARTS[part].kg), extract_missing=False))
    limits = [n for n in (data.limit, constructor_questions) if n is not None]
    subset = replace(data, limit=min(limits, default=None))
    trained = AlignerConfig(name=str(TRAINED))
    runs = {"rag": replace(base, method="rag", name="rag (dense)")}
    if budget is not None:
        runs |= {
            # no reader: the exact (flat) index gives it rag's top 3, so rag's answers (its folder is not that of
            # the runs made with a reader, which would refuse this config)
            "rag at budget": replace(base, method="rag", top_k=budget, reader=ReaderConfig(),
                                     name=f"rag (dense), k = {budget}: kirag's budget (answers: rag's)"),
            "rag rerank": replace(base, method="rag+rerank", aligner=trained,
                                  name=f"rag+rerank, trained Aligner, {base.kirag.k0 * base.kirag.max_steps} passages"),
        }
    runs |= {
        "kirag base": replace(base, method="kirag", name="kirag aligner-only, base MiniLM"),
        "kirag trained": replace(base, method="kirag", aligner=trained, name="kirag aligner-only, trained"),
        "kirag constructor": replace(base, method="kirag", aligner=trained, data=subset,
                                     kirag=replace(base.kirag, constructor=True),
                                     name="kirag constructor, trained"),
    }
    for key, config in runs.items():
        config.output_dir = str(RUNS / part / key.replace(" ", "_"))
    return runs


def hop_counts(benchmark: Benchmark) -> str:
    """The question set's composition by type (MuSiQue: hop count; HotpotQA: bridge or comparison)."""
    counts = Counter(q.type or "unknown" for q in benchmark.questions)
    return ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items()))


def subset_rows(runs: dict[str, EvalConfig], subset: Benchmark) -> list[dict]:
    """Every finished run scored on the questions of `subset`, with intervals and paired tests against the first."""
    scores = [run_scores(c.data.load(), Path(c.output_dir)) for c in runs.values()]
    keep = {q.id for q in subset.questions}
    rows = []
    for config, own in zip(runs.values(), scores):
        predictions = read_predictions(Path(config.output_dir) / "predictions.jsonl")
        metrics = compute_metrics(subset, [predictions[q.id] for q in subset.questions])
        rows.append(with_intervals({"method": config.name, **metrics}) | (
            paired_with({q: v for q, v in scores[0].items() if q in keep}, {q: v for q, v in own.items() if q in keep})
            if rows else {}))
    return rows


def timing(config: EvalConfig, trained: EvalConfig, repeats: int = 2) -> dict:
    """Seconds per question (warm caches, no reader) of single-shot retrieval, the Aligner-only loop,
    and the loop's own queries encoded by the retriever's and the Aligner's encoders, interleaved."""
    benchmark = config.data.load()
    questions = benchmark.questions
    rag = build_method(replace(config, reader=ReaderConfig()), benchmark)
    loop = build_method(replace(trained, reader=ReaderConfig()), benchmark)
    queries = [step["query"] for p in loop.predict(questions) for step in p.trace]  # also warms the caches
    encoders = [rag.retriever.encoder, loop.triples.encoder]

    def encode():
        for e in encoders:
            e.encode(queries, "query", show_progress=False)

    jobs = {"rag": lambda: rag.predict(questions), "kirag": lambda: loop.predict(questions), "encode": encode}
    for name in ("rag", "encode"):  # the loop is already warm
        jobs[name]()
    seconds = {name: 0.0 for name in jobs}
    for _ in range(repeats):
        for name, job in jobs.items():
            start = time.perf_counter()
            job()
            seconds[name] += (time.perf_counter() - start) / repeats / len(questions)
    return {"questions": len(questions), "queries per question": len(queries) / len(questions),
            "rag s/question": seconds["rag"], "kirag aligner-only s/question": seconds["kirag"],
            "its queries encoded s/question": seconds["encode"], "kirag / rag": seconds["kirag"] / seconds["rag"],
            "kirag / its query encodings": seconds["kirag"] / seconds["encode"]}


def budget_verdicts(runs: dict[str, EvalConfig], benchmark: Benchmark) -> list[dict]:
    """KiRAG against the baselines that get its budget, on the questions both scored, in plain words:
    R@5, and the recall of everything each retrieved (recall@retrieved), with paired-bootstrap p-values."""
    scores = {key: run_scores(benchmark, Path(config.output_dir)) for key, config in runs.items()}
    rows = []
    for method in ("kirag trained", "kirag constructor"):
        for baseline in ("rag at budget", "rag rerank"):
            common = [q for q in scores[method] if q in scores[baseline]]
            for metric in ("recall@5", "recall@retrieved"):
                ours = [scores[method][q][metric] for q in common]
                theirs = [scores[baseline][q][metric] for q in common]
                diff, p = paired_test(theirs, ours)
                verdict = ("beats it" if diff > 0 and p < 0.05 else "ahead, not significant" if diff > 0
                           else "no difference" if diff == 0 else "behind, not significant" if p >= 0.05
                           else "does not beat it: behind")
                rows.append({"kirag": runs[method].name, "baseline": runs[baseline].name, "questions": len(common),
                             "metric": metric, "kirag value": 100 * float(np.mean(ours)),
                             "baseline value": 100 * float(np.mean(theirs)), "difference": 100 * diff, "p": p,
                             "verdict": verdict})
    return rows


def run_part(part: str, aligner_data, constructor_questions: int | None, unseen_questions: int,
             aligner: str) -> tuple[str, dict]:
    data = evaluated_questions(part, aligner_data, unseen_questions)
    kg, everything = ROOT / PARTS[part].kg, data.load()
    passages = everything.passages
    missing = KGStore(kg, create=False).missing(p.id for p in passages) if kg.is_dir() else passages
    if missing:
        sys.exit(f"{part}: {len(missing)} of the {len(passages)} passages have no triples in {kg}: "
                 f"python prepare.py kg --config {PARTS[part].kg_config}")
    runs = configs(part, data, constructor_questions)
    budget = round(evaluate(runs["kirag trained"])["passages_retrieved"])
    runs = configs(part, data, constructor_questions, budget)
    for key, config in runs.items():  # finished runs are read back
        started = time.perf_counter()
        evaluate(config)
        print(f"{part} {key}: {time.perf_counter() - started:.0f} s", flush=True)
    subset = runs["kirag constructor"].data.load()
    compared = compare([c.output_dir for c in runs.values()], str(RUNS / part / "compare"))
    rows = [{"questions set": "all", **row} for row in compared]
    if len(subset.questions) < len(everything.questions):  # the Constructor ran on the first questions only
        rows = [r for r in rows if r["method"] != runs["kirag constructor"].name]
        rows += [{"questions set": f"first {len(subset.questions)}", **row} for row in subset_rows(runs, subset)]
    flat = {f"{part}.composition": hop_counts(everything)}
    for row in rows:
        prefix = f"{part}.{'all' if row['questions set'] == 'all' else 'subset'}.{row['method']}"
        flat.update({f"{prefix}.{c}": v for c, v in row.items() if isinstance(v, int | float)})  # intervals, tests
    verdicts = budget_verdicts(runs, everything)
    for row in verdicts:
        prefix = f"{part}.budget.{row['kirag']} vs {row['baseline']}.{row['metric']}"
        flat.update({f"{prefix}.{c}": row[c] for c in ("questions", "kirag value", "baseline value", "difference", "p")})
    dataset = PARTS[part].dataset
    trained_on = list(dict.fromkeys(aligner_data.train_record_datasets))
    if dataset in trained_on:
        held_out = f"the {dataset} test split (a seeded random split by question, never trained on)"
    elif dataset in aligner_data.test_ids:
        held_out = f"the Aligner's {dataset} dataset, which it only tests on ({len(everything.questions)} questions)"
    else:
        held_out = f"the first {len(everything.questions)} questions (none in the Aligner's data)"
    flat[f"{part}.questions"] = held_out
    flat[f"{part}.aligner"] = aligner
    flat[f"{part}.run"] = f"{date.today()}, {machine()}"
    text = (f"## {part}\n\nAligner: {aligner}, trained on {', '.join(trained_on)}. "
            f"Run {flat[f'{part}.run']}.\n\n{PARTS[part].about}: {held_out}. "
            f"Questions by type: {flat[f'{part}.composition']}. Paired tests against rag, on the "
            f"same questions: the difference in points and its paired-bootstrap p-value.\n\n"
            + markdown_table(rows, COLUMNS)
            + "\n### KiRAG against the baselines with its budget\n\n`rag` at k = the passages KiRAG retrieved "
              "and `rag+rerank` over K0 x L passages, paired on the same questions (p: paired bootstrap; "
              "`beats it` needs p < 0.05).\n\n"
            + markdown_table(verdicts, list(verdicts[0])))
    if part == "musique":
        times = timing(runs["rag"], runs["kirag trained"])
        flat.update({f"{part}.timing.{k}": v for k, v in times.items()})
        text += "\n### Aligner-only loop cost (warm caches, no reader)\n\n" + markdown_table([times], list(times))
    return text, flat


def kept_parts(rerun: list[str]) -> tuple[dict[str, str], dict]:
    """The sections and figures of the last results' parts that are not rerun, each naming its own
    checkpoint: parts are added one run at a time (a part's KG may take sessions, and a retrained
    checkpoint differs in its last bits from one machine to another), and the runs they were read
    from need not survive."""
    try:
        previous = json.loads((RESULTS / "kirag_eval.json").read_text())
        markdown = (RESULTS / "kirag_eval.md").read_text()
    except FileNotFoundError:
        return {}, {}
    old = [p for p in PARTS if p not in rerun and f"{p}.questions" in previous]
    for part in old:
        print(f"kirag_eval: {part} kept from the last results (Aligner: {previous[f'{part}.aligner']})")
    sections = {s.split("\n", 1)[0]: "## " + s.rstrip("\n") + "\n" for s in markdown.split("\n## ")[1:]}
    return ({p: sections[p] for p in old},
            {k: v for k, v in previous.items() if k.split(".", 1)[0] in old})


def main() -> None:
    global TRAINED, RUNS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", nargs="+", default=["musique", "hotpotqa"], choices=list(PARTS))
    parser.add_argument("--aligner", type=Path, default=TRAINED,
                        help="the trained Aligner's checkpoint (runs go to runs/bench/kirag/<its training run>-<its "
                             "content digest>: a retrained checkpoint gets new runs)")
    parser.add_argument("--unseen_questions", type=int, default=100,
                        help="a part whose dataset the Aligner did not train on: its first N questions")
    parser.add_argument("--constructor_questions", type=int, default=None,
                        help="run the Constructor on the first N questions only (default: all)")
    args = parse_args(parser)
    TRAINED = args.aligner.resolve()
    if not TRAINED.is_file():
        sys.exit(f"{TRAINED} is missing: train the Aligner first (see this script's docstring)")
    digest = content_digest(TRAINED)
    RUNS = ROOT / "runs" / "bench" / "kirag" / f"{TRAINED.parents[1].name}-{digest[:8]}"
    aligner_data = trained_datamodule(TRAINED)
    shown = TRAINED.relative_to(ROOT) if TRAINED.is_relative_to(ROOT) else TRAINED
    aligner = f"`{shown}` (content digest {digest[:8]})"
    sections, flat = kept_parts(args.parts)
    for part in args.parts:
        text, figures = run_part(part, aligner_data, args.constructor_questions, args.unseen_questions, aligner)
        sections[part] = text
        flat.update(figures)
    markdown = ("# KiRAG against single-shot dense retrieval\n\n"
                "Dense MiniLM retriever for every method; K0 = 10, N = 20, L = 5; reader: packaged "
                "Qwen2.5-Coder-0.5B-Instruct on the top 3 passages. Recall, EM and F1 in %. The trained Aligner is "
                "a checkpoint of the best validation MRR, which each part's section names with the date and machine "
                "it ran on. Each part's questions are ones it never trained on (its section says which). "
                "95% intervals: percentile bootstrap over questions.\n\n"
                + "\n".join(sections[p] for p in PARTS if p in sections))
    write_results("kirag_eval", markdown, flat)


if __name__ == "__main__":
    main()
