"""KiRAG against the baselines a reviewer expects, each at KiRAG's passage budget.

    python -m benchmarks.kirag_eval --split validation   # choices, on validation questions only
    python -m benchmarks.kirag_eval --split test         # the released config, scored once on test questions
        [--aligner runs/aligner/multi/checkpoints/best.ckpt]
        [--parts musique musique_own musique_kag hotpotqa hotpotqa_ircot_full]
    python -m benchmarks.kirag_eval --split validation \
        --ablation runs/aligner/multi_dense_negatives/checkpoints/best.ckpt  # training ablations, on validation

Every method searches the same dense MiniLM index (hybrid, and KiRAG when validation chose it, add BM25) and
is answered by the same reader (the packaged Qwen2.5-0.5B on its top 3 passages), so methods differ only in
what they retrieve:
- `rag`: one retrieval with the question (k = 10);
- at KiRAG's budget (the distinct passages the trained Aligner-only loop retrieved per question, B):
  `rag` with k = B (no reader: its top 3, so its answers, are rag's); `hybrid`, BM25 and dense fused
  by reciprocal rank, k = B; `mdr`, two-hop dense retrieval in the style of MDR, at most B passages;
  `ircot`, retrieval interleaved with the LM's chain of thought, at most B passages;
- `rag+rerank`: the same dense top K0·L (50) reranked by the retriever's score fused with the trained
  Aligner's score of each passage's text, the fusion weight chosen on validation questions;
- KiRAG (K0 = 10, N = 20, L = 5) Aligner-only with the base MiniLM and with the trained Aligner (the
  released CPU config), and with the packaged LM as Constructor.

Protocol. `--split validation` runs on the Aligner's validation questions of each part's dataset
(never trained on, never tested on) and makes the choices, each by pooled R@5: the rerank weight, KiRAG's
retriever (RETRIEVERS) and passage ranking together (the ranking swept offline over its runs), then over that
retriever and ranking the Constructor's variant (CONSTRUCTORS). It writes
`kirag_validation.md/.json`, which name the checkpoint. `--split test` refuses to run without those
choices for the same checkpoint, then scores each part's test questions once: the test split of the
part's dataset, or for a dataset the Aligner never saw its first `--unseen_questions`. Runs resume
(`evaluation.runner`), so a rerun only reads them back; on test, a run committed under
`benchmarks/results/kirag_eval/<part>/` by the same config over the same inputs is read back from its scores
(a fresh checkout, or a changed KiRAG ranking, runs only what changed).

Training ablations (`--split validation --ablation CKPT ...`: Aligners trained as the recipe with one change,
such as the negatives of configs/recipes/ablations/) are decided on the same validation questions, none of
which any of the checkpoints trained on: the released Aligner-only loop (its validation-chosen ranking) with
each checkpoint against the recipe's, pooled R@5, paired tests with Holm over the ablations. The rule, fixed
before any run: an ablation replaces the recipe's training only when it is ahead at Holm p < 0.05, since a
replacement retrains the recipe and scores its test questions again. Writes `kirag_ablations.md/.json`.

Significance: paired sign-flip tests on the same questions, Holm-adjusted within each family. The
primary family per part is the claim: trained Aligner-only KiRAG against each baseline at its budget,
on R@5. The secondary family holds the rest: the Constructor against the same baselines, the training
and Constructor ablations on R@5, recall of everything retrieved against the budget-matched pools,
and EM/F1 of each answering method against `rag`. Each run's per-question scores are committed under
`benchmarks/results/kirag_eval/<part>/`, from which `evaluate.py compare` and the tests recompute
every figure and p-value.

The KGs (committed archives restore in seconds):
    python prepare.py kg --config configs/kg/musique_gpt35.yaml           # musique: gpt-3.5 triples
    python prepare.py kg --config configs/kg/musique_train_100.yaml       # musique_own: this project's
    python prepare.py kg --config configs/kg/musique_kag_100.yaml         # musique_kag
    python prepare.py kg --config configs/kg/hotpotqa_train_100.yaml      # hotpotqa
    python prepare.py kg --config configs/kg/hotpotqa_ircot_dev_500.yaml  # hotpotqa_ircot_full
and the Aligner: `python prepare.py recipe --config configs/recipes/multi_cpu.yaml`.
"""

import argparse
import json
import shutil
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import NamedTuple


from benchmarks.common import (RESULTS, ROOT, SHARED_DATA, commit_scores, committed_runs, machine, parse_args,
                               stop_if_held, trained_datamodule, write_results, write_rows)
from core.records import content_digest
from datamodules.loaders import Benchmark, DataConfig, write_unified
from evaluation.config import AlignerConfig, EvalConfig, KiRAGConfig, ReaderConfig
from evaluation.report import cost_table, headline_table, markdown_table, significance, significance_table
from evaluation.ranking_sweep import sweep
from evaluation.runner import evaluate
from evaluation.scores import ScoredRun, read_run
from evaluation.stats import p_text, paired_test
from inference.ircot import IRCoTSettings
from inference.kirag_ranking import RankingConfig
from inference.mdr import MDRSettings
from inference.rerank import RerankSettings
from kg.store import KGStore

RUNS = ROOT / "runs" / "bench" / "kirag"  # main adds <training run folder>-<checkpoint digest>
VALIDATION = "kirag_validation"
ABLATIONS = "kirag_ablations"
WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)  # rag+rerank's fusion weights tried on validation
WEIGHT_NAMES = ("triple_weight", "retrieval_weight", "text_weight")
RANKING_NAMES = (*WEIGHT_NAMES, "text_query")
# The Constructor's variants tried on validation (the LM on a CPU): the paper's, the Aligner's best 5 shown to
# the LM, and with the chain ended only when the LM's answer names its last tail
CONSTRUCTORS = {"constructor": {}, "constructor top 5": {"constructor_candidates": 5},
                "constructor top 5, answer stop": {"constructor_candidates": 5, "stop": "answer_in_chain"}}
# KiRAG's retriever tried on validation, the paper's first: the dense index alone, or BM25 and dense fused by
# reciprocal rank (the `hybrid` baseline's retriever)
RETRIEVERS = ("dense", "hybrid")
# KiRAG's passage ranking tried on validation (offline, from the same runs): w_t, w_r, w_x; the paper's first
RANKINGS = [RankingConfig(1.0, 0.0, 0.0)] + [
    RankingConfig(t, r, x) for t in (1.0, 0.5, 0.0) for r in (0.0, 0.5, 1.0) for x in (0.0, 0.5, 1.0)
    if (t, r, x) != (1.0, 0.0, 0.0) and t + r + x > 0]
# An ablation of the chosen ranking: the text scored against each step's query instead of the question alone,
# every weighting of RANKINGS with a text weight; the best replaces the choice only when ahead of it at p < 0.05
# (paired sign-flip test over the validation questions), the rule of the training ablations, fixed before its run
STEP_RANKINGS = [replace(ranking, text_query="steps") for ranking in RANKINGS if ranking.text_weight > 0]
MUSIQUE = DataConfig("musique", str(SHARED_DATA / "musique" / "hipporag_train_100.json"),
                     str(SHARED_DATA / "musique" / "hipporag_train_100_corpus.json"))
MUSIQUE_KAG = DataConfig("musique", str(SHARED_DATA / "musique" / "kag_100.json"))
HOTPOTQA = DataConfig("hotpotqa", str(SHARED_DATA / "hotpotqa" / "hipporag_train_100.json"),
                      str(SHARED_DATA / "hotpotqa" / "hipporag_train_100_corpus.json"))
# all 500 questions over the union of their contexts (4,858 passages)
IRCOT_ALL = DataConfig("ircot", str(SHARED_DATA / "hotpotqa" / "ircot_dev_500.jsonl"))


@dataclass(frozen=True)
class Part:
    """Questions and corpus (`data`), the KG over that corpus and the config that builds it; the Aligner
    dataset whose test split is evaluated and the one whose validation questions make the choices.
    Parts with the same `questions` share their question sets, and the runs that do not read the KG."""

    data: DataConfig
    kg: str
    kg_config: str
    dataset: str
    val_dataset: str
    questions: str
    about: str


PARTS = {
    "musique": Part(MUSIQUE, "runs/kg/musique", "configs/kg/musique_gpt35.yaml", "musique", "musique", "musique",
                    "MuSiQue hipporag_train_100 (1,890 passages), gpt-3.5 triples"),
    "musique_own": Part(MUSIQUE, "runs/kg/musique_train_100", "configs/kg/musique_train_100.yaml", "musique",
                        "musique", "musique", "MuSiQue hipporag_train_100, this project's triples (packaged LM)"),
    "musique_kag": Part(MUSIQUE_KAG, "runs/kg/musique_kag_100_full", "configs/kg/musique_kag_100.yaml",
                        "musique_kag", "musique_kag", "musique_kag",
                        "MuSiQue kag_100 (1,839 passages, other questions than train-100's), this project's triples"),
    "hotpotqa": Part(HOTPOTQA, "runs/kg/hotpotqa_train_100", "configs/kg/hotpotqa_train_100.yaml", "hotpotqa",
                     "hotpotqa", "hotpotqa", "HotpotQA hipporag_train_100 (994 passages), this project's triples"),
    "hotpotqa_ircot_full": Part(IRCOT_ALL, "runs/kg/hotpotqa_ircot_dev_500_full",
                                "configs/kg/hotpotqa_ircot_dev_500.yaml", "hotpotqa_ircot_dev_100", "hotpotqa_ircot",
                                "hotpotqa_ircot_full", "HotpotQA dev (ircot_dev_500): its first 100 questions over "
                                "the whole corpus of the 500 (4,858 passages), this project's triples"),
}
BUDGET_BASELINES = ("rag at budget", "hybrid", "mdr", "ircot", "rerank")
POOLED_BASELINES = ("rag at budget", "hybrid", "mdr", "ircot")  # their pools hold KiRAG's budget


def retriever_marks(retriever: str) -> tuple[str, str]:
    """What tells KiRAG's runs over `retriever` apart: a suffix to their names and one to their folders; none
    for the paper's dense index, so that its runs keep their names and folders."""
    return ("", "") if retriever == "dense" else (f", {retriever} retrieval", f"_{retriever}")


def held_out(name: str, data, split: str, unseen_questions: int) -> DataConfig:
    """The questions of part `name` the Aligner (`data`: its AlignerDataModule) never trained on, in
    unified format. `test`: the test split of the part's dataset when the Aligner has one, else the
    part's first `unseen_questions`, refused when the Aligner's chains files hold any of them.
    `validation`: the Aligner's validation questions of the part's `val_dataset`."""
    part = PARTS[name]
    benchmark = part.data.load()
    if split == "validation":
        wanted = {r.question_id for r, d in zip(data.val_records, data.val_record_datasets) if d == part.val_dataset}
        if not wanted:
            sys.exit(f"{name}: the Aligner has no validation questions of {part.val_dataset}")
    elif part.dataset in data.test_ids:
        wanted = set(data.test_ids[part.dataset])
    else:
        benchmark = replace(part.data, limit=unseen_questions).load()
        seen = {r.question_id for r in data.train_records + data.val_records} | {
            q for ids in data.test_ids.values() for q in ids}
        if overlap := [q.id for q in benchmark.questions if q.id in seen]:
            sys.exit(f"{name}: {len(overlap)} of the first {unseen_questions} questions of {part.data.questions} "
                     f"are in the chains files the Aligner was trained with (first: {overlap[0]}); it has no test "
                     f"split of {part.dataset} to evaluate instead")
        wanted = {q.id for q in benchmark.questions}
    questions = [q for q in benchmark.questions if q.id in wanted]
    if len(questions) < len(wanted):
        sys.exit(f"{name}: {len(wanted) - len(questions)} of the {len(wanted)} {split} questions of the Aligner's "
                 f"data are not among the {len(benchmark.questions)} of {part.data.questions} this part loads")
    return write_held_out(Benchmark(questions, benchmark.passages), RUNS / f"{part.questions}_{split}")


def write_held_out(benchmark: Benchmark, out: Path) -> DataConfig:
    """`benchmark` written as unified data under `out`, and the config that reads it back."""
    out = write_unified(benchmark, out)
    return DataConfig("unified", str(out / "questions.jsonl"), str(out / "passages.jsonl"))


def configs(part: str, data: DataConfig, split: str, trained: str, budget: int | None = None,
            weight: float | None = None, ranking: RankingConfig | None = None,
            constructor: dict | None = None, retriever: str = "dense") -> dict[str, EvalConfig]:
    """The methods in table order. Without `budget` only the trained Aligner-only loop, which sets it;
    on validation no reader, and rag+rerank at each weight of WEIGHTS instead of the chosen `weight`.
    KiRAG searches with `retriever` (the baselines as their names say), ranks by `ranking` (None: the
    paper's rule) and keeps every passage's text score, so that any ranking can be swept from its runs
    (`evaluation.ranking_sweep`); its chain does not depend on it. On validation every Constructor
    variant of CONSTRUCTORS runs; on test the chosen one (`constructor`)."""
    reader = ReaderConfig(enabled=split == "test")
    base = EvalConfig(data=data, retriever="dense", reader=reader)
    kirag = replace(base, method="kirag", retriever=retriever, kirag=KiRAGConfig(
        kg=str(ROOT / PARTS[part].kg), extract_missing=False, ranking=replace(ranking or RankingConfig(),
                                                                              score_text=True)))
    over, suffix = retriever_marks(retriever)
    aligner = AlignerConfig(name=trained)
    runs = {"kirag trained": replace(kirag, aligner=aligner, name=f"kirag aligner-only, trained{over}")}
    if budget is not None:
        runs = _with_baselines(runs, base, kirag, over, aligner, split, budget, weight, constructor or {})
    for key, config in runs.items():  # runs that do not read the KG are shared by parts of the same questions
        reads_kg = config.method == "kirag"
        folder = key.replace(" ", "_") + (f"_{budget}" if key in POOLED_BASELINES else "")  # parts' budgets differ
        folder += suffix if reads_kg else ""
        config.output_dir = str(RUNS / split / (part if reads_kg else PARTS[part].questions) / folder)
    return runs


def _with_baselines(runs: dict[str, EvalConfig], base: EvalConfig, kirag: EvalConfig, over: str,
                    aligner: AlignerConfig, split: str, budget: int, weight: float | None, constructor: dict
                    ) -> dict[str, EvalConfig]:
    """`runs` (the trained Aligner-only loop) with the baselines (from `base`) and KiRAG's other loops (from
    `kirag`, named with `over`) added, in table order."""
    depth = kirag.kirag.k0 * kirag.kirag.max_steps
    reranks = {f"rerank {w}": replace(base, method="rag+rerank", aligner=aligner, rerank=RerankSettings(weight=w),
                                      name=f"rag+rerank (top {depth}, weight {w})")
               for w in (WEIGHTS if split == "validation" else [weight])}
    if split == "validation":
        variants = {key: replace(kirag, aligner=aligner, name=f"kirag {key}, trained{over}",
                                 kirag=replace(kirag.kirag, constructor=True, **options))
                    for key, options in CONSTRUCTORS.items()}
        runs = {"rag": replace(base, method="rag", name="rag (dense, k = 10)")} | reranks | runs | variants
    else:
        runs = {
            "rag": replace(base, method="rag", name="rag (dense, k = 10)"),
            # no reader: the exact (flat) index gives it rag's top 3, so rag's answers
            "rag at budget": replace(base, method="rag", top_k=budget, reader=ReaderConfig(),
                                     name=f"rag (dense, k = {budget})"),
            "hybrid": replace(base, method="rag", retriever="hybrid", top_k=budget,
                              name=f"hybrid BM25+dense (k = {budget})"),
            "mdr": replace(base, method="mdr", top_k=budget, mdr=MDRSettings(budget=budget),
                           name=f"mdr-style two-hop dense (budget {budget})"),
            "ircot": replace(base, method="ircot", top_k=budget, ircot=IRCoTSettings(budget=budget),
                             name=f"ircot (budget {budget})"),
            "rerank": next(iter(reranks.values())),
            "kirag base": replace(kirag, name=f"kirag aligner-only, base MiniLM{over}"),
        } | runs | {
            "kirag constructor": replace(kirag, kirag=replace(kirag.kirag, constructor=True, **constructor),
                                         aligner=aligner, name=f"kirag constructor, trained{over}"),
        }
    return runs


def trained_aligner(checkpoint: Path, runs: Path) -> tuple[Path, Path, str]:
    """The checkpoint resolved, the folder of its runs under `runs` (<its training run>-<its content digest>: a
    retrained checkpoint gets new runs) and how tables name it; stops, naming the recipe, when it is missing."""
    trained = checkpoint.resolve()
    if not trained.is_file():
        sys.exit(f"{trained} is missing: python prepare.py recipe --config configs/recipes/multi_cpu.yaml")
    digest = content_digest(trained)[:8]
    shown = trained.relative_to(ROOT) if trained.is_relative_to(ROOT) else trained
    return trained, runs / f"{trained.parents[1].name}-{digest}", f"`{shown}` (content digest {digest})"


def require_kg(name: str, kg: Path, kg_config: str, data: DataConfig) -> None:
    """Stop, naming the command that extracts them, when passages of `data` have no triples in `kg`."""
    passages = data.load().passages
    missing = KGStore(kg, create=False).missing(p.id for p in passages) if kg.is_dir() else passages
    if missing:
        sys.exit(f"{name}: {len(missing)} of the {len(passages)} passages have no triples in {kg}: "
                 f"python prepare.py kg --config {kg_config}")


def checked(parts: list[str], aligner_data, split: str, unseen_questions: int) -> dict[str, DataConfig]:
    """Each part's held-out questions, once every part's KG is checked: a missing KG stops the run before its
    first method, not after hours of the parts before it."""
    datas = {part: held_out(part, aligner_data, split, unseen_questions) for part in parts}
    for part, data in datas.items():
        require_kg(part, ROOT / PARTS[part].kg, PARTS[part].kg_config, data)
    return datas


def validation_groups(parts: list[str], aligner_data, unseen_questions: int) -> dict[str, tuple[str, DataConfig]]:
    """Question set -> its first part in `parts` and that part's validation questions, every KG checked first:
    validation pools parts of the same questions once."""
    firsts: dict[str, str] = {}
    for part in parts:
        firsts.setdefault(PARTS[part].questions, part)
    datas = checked(list(firsts.values()), aligner_data, "validation", unseen_questions)
    return {group: (part, datas[part]) for group, part in firsts.items()}


class Choices(NamedTuple):
    """What `--split validation` chose for a checkpoint."""

    weight: float  # rag+rerank's fusion weight
    retriever: str  # KiRAG's
    ranking: RankingConfig  # KiRAG's passage ranking
    constructor: dict  # the Constructor's options (CONSTRUCTORS)


def run_all(part: str, data: DataConfig, split: str, trained: str, weight: float | None = None,
            ranking: RankingConfig | None = None, constructor: dict | None = None, retriever: str = "dense"
            ) -> tuple[dict[str, ScoredRun], int]:
    """Every method of the part run (or read back), and KiRAG's budget; the caller has checked the KG (`checked`).
    On test, a run whose scores benchmarks/results/kirag_eval/<part>/ holds, made by the same config over
    today's inputs on every question (`committed_runs`), is read back from them, not run again: a changed
    KiRAG ranking reruns KiRAG's rows alone. A folder holding another config's run stops it before the first
    run, and before the baselines, whose folders the budget names."""
    questions = len(data.load().questions)

    def committed(runs: dict[str, EvalConfig]) -> dict[str, Path]:
        return committed_runs(f"kirag_eval/{part}", runs, questions) if split == "test" else {}

    first = configs(part, data, split, trained, ranking=ranking, retriever=retriever)["kirag trained"]
    if kept := committed({"kirag trained": first}):
        budget = round(read_run(kept["kirag trained"]).summary()["passages_retrieved"])
    else:
        stop_if_held([first])
        budget = round(evaluate(first)["passages_retrieved"])
    runs = configs(part, data, split, trained, budget, weight, ranking, constructor, retriever)
    kept = committed(runs)
    if kept:
        print(f"{split} {part}: committed runs read back (same config and inputs):", ", ".join(kept), flush=True)
    stop_if_held([config for key, config in runs.items() if key not in kept])
    for key, config in runs.items():
        if key not in kept:
            evaluate(config)
            print(f"{split} {part} {key}: done", flush=True)
    return {key: read_run(kept.get(key) or config.output_dir) for key, config in runs.items()}, budget


def composition(data: DataConfig) -> str:
    """The question set's composition by type (MuSiQue: hop count; HotpotQA: bridge or comparison)."""
    counts = Counter(q.type or "unknown" for q in data.load().questions)
    return ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items()))


def families(runs: dict[str, ScoredRun]) -> dict[str, list[tuple[ScoredRun, ScoredRun, str]]]:
    trained, constructor = runs["kirag trained"], runs["kirag constructor"]
    answering = [key for key in runs if key not in ("rag", "rag at budget")]
    return {
        "primary": [(trained, runs[b], "recall@5") for b in BUDGET_BASELINES],
        "secondary": [(constructor, runs[b], "recall@5") for b in BUDGET_BASELINES]
        + [(trained, runs["kirag base"], "recall@5"), (constructor, trained, "recall@5")]
        + [(trained, runs[b], "recall@retrieved") for b in POOLED_BASELINES]
        + [(runs[m], runs["rag"], metric) for m in answering for metric in ("em", "f1")],
    }


def test_part(part: str, data: DataConfig, aligner_data, trained: str, chosen: Choices) -> tuple[str, dict]:
    runs, budget = run_all(part, data, "test", trained, chosen.weight, chosen.ranking, chosen.constructor,
                           chosen.retriever)
    commit_scores(f"kirag_eval/{part}", {key: run.source for key, run in runs.items()})
    summaries = {key: run.summary() for key, run in runs.items()}
    labelled = [(run.method, summaries[key]) for key, run in runs.items()]
    flat = {f"{part}.budget": budget, f"{part}.composition": composition(data)}
    for key, summary in summaries.items():
        flat[f"{part}.{key}.method"] = runs[key].method
        flat.update({f"{part}.{key}.{name}": value for name, value in summary.items()})
    tables = {}
    for family, comparisons in families(runs).items():
        rows = significance(comparisons)
        tables[family] = significance_table(rows)
        for i, row in enumerate(rows):
            flat.update({f"{part}.paired.{family}.{i}.{field}": value for field, value in row.items()})
    dataset = PARTS[part].dataset
    questions = (f"the test split of {dataset}" if dataset in aligner_data.train_record_datasets
                 else f"{dataset}, which the Aligner only tests on" if dataset in aligner_data.test_ids
                 else "questions the Aligner never saw")
    flat[f"{part}.questions"] = questions
    text = (f"## {part}\n\n{PARTS[part].about}. Test questions ({questions}): {composition(data)}. KiRAG's budget: "
            f"{budget} passages.\n\n" + headline_table(labelled)
            + "\n### Significance: KiRAG (trained, Aligner-only) against each baseline at its budget (primary)\n\n"
            + tables["primary"]
            + "\n### Significance: the other comparisons (secondary)\n\n" + tables["secondary"]
            + "\n### Cost\n\n" + cost_table(labelled))
    return text, flat


def validate(parts: list[str], aligner_data, unseen_questions: int, trained: str, aligner: str) -> None:
    """KiRAG's retriever and passage ranking together (ties to the dense index and the paper's rule), then,
    over that retriever, the Constructor's variant (ties to the paper's); and rag+rerank's weight (ties to
    the smaller); each by pooled validation R@5, with each part's figures."""
    flat = {"aligner": aligner, "run": f"{date.today()}, {machine()}"}
    groups = validation_groups(parts, aligner_data, unseen_questions)
    loops = {group: {r: configs(part, data, "validation", trained, retriever=r)["kirag trained"] for r in RETRIEVERS}
             for group, (part, data) in groups.items()}
    for group in groups:
        for config in loops[group].values():
            evaluate(config)
    swept = {r: sweep([loops[group][r].output_dir for group in groups], RANKINGS, k=5) for r in RETRIEVERS}
    retriever, best = max(((r, i) for r in RETRIEVERS for i in range(len(RANKINGS))),
                          key=lambda pick: swept[pick[0]][pick[1]]["recall@5"])  # max keeps the first of equals
    chosen = RANKINGS[best]
    steps = {r: sweep([loops[group][r].output_dir for group in groups], STEP_RANKINGS, k=5) for r in RETRIEVERS}
    steps_retriever, steps_best = max(((r, i) for r in RETRIEVERS for i in range(len(STEP_RANKINGS))),
                                      key=lambda pick: steps[pick[0]][pick[1]]["recall@5"])
    against = dict(swept[retriever][best]["questions"])
    candidate = steps[steps_retriever][steps_best]
    steps_test = paired_test([against[q] for q, _ in candidate["questions"]], [r for _, r in candidate["questions"]])
    steps_adopted = steps_test.diff > 0 and steps_test.p < 0.05
    flat |= {"steps ablation.retriever": steps_retriever, "steps ablation.recall@5": candidate["recall@5"],
             "steps ablation.difference": steps_test.diff, "steps ablation.p": steps_test.p,
             "steps ablation.adopted": steps_adopted}
    flat |= {f"steps ablation.{n}": getattr(STEP_RANKINGS[steps_best], n) for n in WEIGHT_NAMES}
    chosen_recall = swept[retriever][best]["recall@5"]
    if steps_adopted:
        retriever, chosen, chosen_recall = steps_retriever, STEP_RANKINGS[steps_best], candidate["recall@5"]
    rows, pooled, counted, variants = [], Counter(), 0, {key: [] for key in CONSTRUCTORS}
    for group, (part, data) in groups.items():
        runs, _ = run_all(part, data, "validation", trained, retriever=retriever)
        ordered = {}  # the chosen retriever's loop in run_all's runs gives way to every retriever's
        for key, run in runs.items():
            ordered |= ({f"kirag trained {r}": read_run(c.output_dir) for r, c in loops[group].items()}
                        if key == "kirag trained" else {key: run})
        commit_scores(f"{VALIDATION}/{group}", {key: run.source for key, run in ordered.items()})
        for key in CONSTRUCTORS:
            variants[key].append(ordered[key].source)
        n = len(data.load().questions)
        counted += n
        for key, run in ordered.items():
            r5 = run.summary()["recall@5"]
            rows.append({"questions": f"{group} validation", "n": n, "method": run.method, "recall@5": r5})
            flat[f"{group}.{key}.recall@5"] = r5
            pooled[float(key.split()[1]) if key.startswith("rerank") else key] += n * r5
        flat[f"{group}.questions"] = n
    weight = max(WEIGHTS, key=lambda w: (pooled[w], -w))
    flat |= {f"pooled.rerank {w}.recall@5": pooled[w] / counted for w in WEIGHTS} | {
        "pooled.questions": counted, "choice.rerank.weight": weight}
    loop_keys = [f"kirag trained {r}" for r in RETRIEVERS]
    flat |= {f"pooled.{key}.recall@5": pooled[key] / counted for key in [*CONSTRUCTORS, *loop_keys]}
    # the Constructor's variants over the chosen retriever, ranked as chosen, as on test
    ranked = {"kirag trained": chosen_recall} | {
        key: sweep(folders, [chosen], k=5)[0]["recall@5"] for key, folders in variants.items()}
    variant = max(CONSTRUCTORS, key=ranked.get)  # max keeps the first of equals: the paper's
    flat |= {f"chosen ranking.{key}.recall@5": recall for key, recall in ranked.items()}
    flat |= {"choice.constructor.variant": variant, **{f"choice.constructor.{k}": v
                                                      for k, v in CONSTRUCTORS[variant].items()}}
    lm_helps = ranked[variant] > ranked["kirag trained"]
    flat |= {f"pooled.ranking {r} {ranking_name(ranking)}.recall@5": by_retriever[r][i]["recall@5"]
             for grid, by_retriever in ((RANKINGS, swept), (STEP_RANKINGS, steps)) for r in RETRIEVERS
             for i, ranking in enumerate(grid)}
    flat |= {"choice.kirag.retriever": retriever} | {f"choice.ranking.{n}": getattr(chosen, n) for n in RANKING_NAMES}
    write_rows(RESULTS / VALIDATION / "ranking_sweep.jsonl.gz", [
        {"retriever": r, "ranking": ranking_name(ranking), "question_id": qid, "recall@5": recall}
        for grid, by_retriever in ((RANKINGS, swept), (STEP_RANKINGS, steps)) for r in RETRIEVERS
        for ranking, row in zip(grid, by_retriever[r]) for qid, recall in row["questions"]])
    steps_rows, ranking_rows = weighting_rows(STEP_RANKINGS, steps), weighting_rows(RANKINGS, swept)
    shown = STEP_RANKINGS[steps_best]
    text = (f"# KiRAG's choices, made on validation questions\n\nAligner: {aligner}. Run {flat['run']}. The "
            f"Aligner's validation questions of each part's dataset ({counted} in all), never trained or tested on; "
            f"dense MiniLM retrieval but where a row names another; KiRAG's rows rank passages by the paper's rule "
            "(the sections below rank them again); no reader. R@5 in %.\n\n"
            + markdown_table(rows, list(rows[0]))
            + "\nPooled R@5 of rag+rerank by weight: "
            + ", ".join(f"{w}: {100 * pooled[w] / counted:.1f}" for w in WEIGHTS)
            + f". Chosen: **weight {weight}** (the best pooled R@5, ties to the smaller weight).\n\n"
            "## KiRAG's retriever and passage ranking\n\nThe trained Aligner-only runs above, one per retriever "
            f"({', '.join(RETRIEVERS)}: the dense index alone, or BM25 and dense fused by reciprocal rank as the "
            "hybrid baseline does), ranked again offline for each weighting (`evaluation/ranking_sweep.py`: a "
            "passage's score is w_t · its best triple score + w_r · its best retriever score + w_x · the Aligner's "
            "score of its text, each min-max normalised per question; the chain does not depend on the ranking); "
            "pooled R@5 over the same questions. The first row is the paper's rule.\n\n"
            + markdown_table(ranking_rows, list(ranking_rows[0]))
            + "\n### Ablation: the text scored against each step's query\n\nThe same runs, X now the Aligner's best "
            "score of the passage's text against the queries of the steps that retrieved it (the question, then the "
            "question and the chain so far) instead of the question alone (`kirag.ranking.text_query: steps`), "
            "for each weighting above with a text weight. Rule, fixed before this run: its best replaces the choice "
            "only when ahead of it at p < 0.05, paired over the same questions, as the training ablations are.\n\n"
            + markdown_table(steps_rows, list(steps_rows[0]))
            + f"\nIts best, the {steps_retriever} retriever with w_t {shown.triple_weight:g}, w_r "
            f"{shown.retrieval_weight:g}, w_x {shown.text_weight:g}: R@5 {100 * candidate['recall@5']:.1f}, "
            f"{100 * steps_test.diff:+.1f} points against the choice of the grid above (95% CI "
            f"{100 * steps_test.low:+.1f} to {100 * steps_test.high:+.1f}, p {p_text(steps_test.p)}, "
            f"{steps_test.n} questions): **{'adopted' if steps_adopted else 'not adopted'}**.\n\n"
            + f"Chosen: **the {retriever} retriever with w_t {chosen.triple_weight:g}, w_r "
            f"{chosen.retrieval_weight:g}, w_x {chosen.text_weight:g}"
            + (", the text against the steps" if chosen.text_query == "steps" else "")
            + "** (the best pooled R@5, ties to the dense retriever and the paper's rule, then the ablation's rule)."
            "\n\n"
            "## KiRAG's Constructor\n\nOver the chosen retriever and ranked as chosen (the runs above, ranked again "
            "offline), pooled R@5 of the trained Aligner-only loop and of each Constructor variant (the packaged LM "
            "picks the next triple): " + ", ".join(f"{key}: {100 * recall:.1f}" for key, recall in ranked.items())
            + f". Chosen for the Constructor's rows: **{variant}** (ties to the paper's). "
            + ("It is ahead of the Aligner alone here." if lm_helps else
               "It does not beat the Aligner alone here, so Aligner-only stays the CPU default.")
            + f"\n\nPer-question scores: `benchmarks/results/{VALIDATION}/<questions>/`, and each retriever's and "
            "ranking's R@5 per question in `ranking_sweep.jsonl.gz` beside them.\n")
    write_results(VALIDATION, text, flat)


def weighting_rows(grid: list[RankingConfig], swept: dict[str, list[dict]]) -> list[dict]:
    """A table's rows: each ranking of `grid` with its pooled R@5 over each retriever (`swept`: `sweep`'s rows)."""
    return [{"w_t (best triple)": ranking.triple_weight, "w_r (retrieval)": ranking.retrieval_weight,
             "w_x (Aligner on text)": ranking.text_weight}
            | {f"recall@5 {r}": swept[r][i]["recall@5"] for r in RETRIEVERS} for i, ranking in enumerate(grid)]


def ranking_name(ranking: RankingConfig) -> str:
    """A ranking as the validation files name it: w_t/w_r/w_x, and `steps` when the text is scored against them."""
    steps = " steps" if ranking.text_query == "steps" else ""
    return f"{ranking.triple_weight:g}/{ranking.retrieval_weight:g}/{ranking.text_weight:g}{steps}"


def validate_ablations(parts: list[str], aligner_data, trained: str, aligner: str, checkpoints: list[Path]) -> None:
    """Each checkpoint of `checkpoints` in the released Aligner-only loop against the recipe's (`trained`, whose
    datamodule is `aligner_data`) on the validation questions of each question set, pooled; see the module
    docstring for the rule."""
    chosen = choices(aligner)
    named = {"recipe": Path(trained)} | {f"{c.parents[1].name}-{content_digest(c)[:8]}": c for c in checkpoints}
    datamodules = {name: aligner_data if name == "recipe" else trained_datamodule(c) for name, c in named.items()}
    trained_on = {name: {r.question_id for r in dm.train_records} for name, dm in datamodules.items()}
    pooled, rows, flat = {name: {} for name in named}, [], {"aligner": aligner, "run": f"{date.today()}, {machine()}"}

    def report(questions: str, name: str, run: ScoredRun) -> None:
        recall = run.summary()["recall@5"]
        rows.append({"questions": questions, "n": len(run.scores), "checkpoint": name, "recall@5": recall})
        flat[f"{questions.removesuffix(' validation')}.{name}.recall@5"] = recall

    for group, (part, data) in validation_groups(parts, aligner_data, 0).items():
        wanted = {q.id for q in data.load().questions}
        folders = {name: RUNS / "validation" / part / f"ablation_{name}" for name in named}
        for name, checkpoint in named.items():
            if seen := wanted & trained_on[name]:
                sys.exit(f"{checkpoint} trained on {len(seen)} of the {group} validation questions (first: "
                         f"{sorted(seen)[0]}): an ablation must keep the recipe's split")
            config = replace(configs(part, data, "validation", str(checkpoint), ranking=chosen.ranking,
                                     retriever=chosen.retriever)["kirag trained"],
                             name=f"kirag aligner-only, {name}", output_dir=str(folders[name]))
            evaluate(config)
            run = read_run(folders[name])
            pooled[name] |= run.scores
            report(f"{group} validation", name, run)
        commit_scores(f"{ABLATIONS}/{group}", folders)
    runs = {name: ScoredRun(name, "pooled", scores, "") for name, scores in pooled.items()}
    for name, run in runs.items():
        report("pooled", name, run)
    tested = significance([(runs[name], runs["recipe"], "recall@5") for name in named if name != "recipe"])
    decisions = []
    for row in tested:
        adopted = row["difference"] > 0 and row["p (Holm)"] < 0.05
        flat |= {f"paired.{row['method']}.{k}": v for k, v in row.items()} | {f"{row['method']}.adopted": adopted}
        decisions.append(f"{row['method']}: {'adopted' if adopted else 'not adopted'}.")
    shown = "\n".join(f"- `{name}`: `{c.relative_to(ROOT) if c.is_relative_to(ROOT) else c}`"
                      for name, c in named.items())
    loop = config.kirag
    text = (f"# KiRAG's training ablations, decided on validation questions\n\nRecipe: {aligner}. Run {flat['run']}. "
            f"The released Aligner-only loop ({chosen.retriever} retrieval, K0 = {loop.k0}, N = {loop.num_candidates}, "
            f"L = {loop.max_steps}, the retriever and passage ranking chosen in {VALIDATION}.md: w_t "
            f"{chosen.ranking.triple_weight:g}, w_r {chosen.ranking.retrieval_weight:g}, w_x "
            f"{chosen.ranking.text_weight:g}) with each checkpoint, on the recipe's "
            "validation questions, which none of them trained on; no reader. R@5 in %.\n\n"
            f"Checkpoints:\n{shown}\n\n" + markdown_table(rows, list(rows[0]))
            + "\n### Significance: each ablation against the recipe, pooled\n\n" + significance_table(tested)
            + "\nRule, fixed before the runs: an ablation replaces the recipe's training only when it is ahead at Holm "
            "p < 0.05 (a replacement retrains the recipe and scores its test questions again). " + " ".join(decisions)
            + f" Per-question scores: `benchmarks/results/{ABLATIONS}/`.\n")
    write_results(ABLATIONS, text, flat)


def drop_unscored(scored: Iterable[str]) -> list[str]:
    """The parts not in `scored`, their committed scores removed: the committed scores are those of the
    table being written, never of an earlier run (another checkpoint or configuration)."""
    unscored = [part for part in PARTS if part not in scored]
    for part in unscored:
        shutil.rmtree(RESULTS / "kirag_eval" / part, ignore_errors=True)
    return unscored


def constructor_text(options: dict) -> str:
    shown = {"constructor_candidates": "the Aligner's best {} shown to the LM", "stop": "chains stop by {}"}
    return ", ".join(shown[k].format(v) for k, v in options.items()) or "the paper's"


def choices(aligner: str) -> Choices:
    """The choices made on validation for this checkpoint; refused when absent or for another."""
    rerun = "run `python -m benchmarks.kirag_eval --split validation`"
    try:
        made = json.loads((RESULTS / f"{VALIDATION}.json").read_text())
    except FileNotFoundError:
        sys.exit(f"{RESULTS / VALIDATION}.json is missing: {rerun} first")
    if made["aligner"] != aligner:
        sys.exit(f"KiRAG's validation choices were made for {made['aligner']}, not {aligner}: {rerun}")
    if not {"choice.kirag.retriever", "choice.ranking.triple_weight", "choice.constructor.variant"} <= made.keys():
        sys.exit(f"KiRAG's validation choices hold no retriever, ranking or Constructor: {rerun}")
    ranking = RankingConfig(*(made[f"choice.ranking.{n}"] for n in WEIGHT_NAMES),  # text_query: chosen since 12-07
                            text_query=made.get("choice.ranking.text_query", "question"))
    return Choices(made["choice.rerank.weight"], made["choice.kirag.retriever"], ranking,
                   CONSTRUCTORS[made["choice.constructor.variant"]])


def main() -> None:
    global RUNS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=["validation", "test"], required=True)
    parser.add_argument("--parts", nargs="+", default=list(PARTS), choices=list(PARTS))
    parser.add_argument("--aligner", type=Path, default=ROOT / "runs/aligner/multi/checkpoints/best.ckpt",
                        help="the trained Aligner's checkpoint (runs go to runs/bench/kirag/<its training run>-<its "
                             "content digest>: a retrained checkpoint gets new runs)")
    parser.add_argument("--unseen_questions", type=int, default=100,
                        help="a part whose dataset the Aligner did not train on: its first N questions")
    parser.add_argument("--ablation", type=Path, nargs="+", default=[],
                        help="with --split validation: Aligners trained as the recipe with one change, each decided "
                             "against --aligner (kirag_ablations.md)")
    args = parse_args(parser)
    if args.ablation and args.split != "validation":
        parser.error("--ablation is decided on validation questions only")
    if missing := [str(c) for c in args.ablation if not c.is_file()]:
        sys.exit(f"{', '.join(missing)}: no such checkpoint (train it: configs/recipes/ablations/)")
    trained, RUNS, aligner = trained_aligner(args.aligner, RUNS)
    aligner_data = trained_datamodule(trained)
    if args.ablation:
        validate_ablations(args.parts, aligner_data, str(trained), aligner, [c.resolve() for c in args.ablation])
        return
    if args.split == "validation":
        validate(args.parts, aligner_data, args.unseen_questions, str(trained), aligner)
        return
    chosen = choices(aligner)
    weight, retriever, ranking, constructor = chosen
    sections, flat = {}, {"aligner": aligner, "run": f"{date.today()}, {machine()}", "choice.rerank.weight": weight,
                          "choice.kirag.retriever": retriever}
    flat |= {f"choice.ranking.{n}": getattr(ranking, n) for n in RANKING_NAMES}
    flat |= {f"choice.constructor.{k}": v for k, v in constructor.items()}
    for part, data in checked(args.parts, aligner_data, "test", args.unseen_questions).items():
        sections[part], figures = test_part(part, data, aligner_data, str(trained), chosen)
        flat.update(figures)
    trained_on = ", ".join(dict.fromkeys(aligner_data.train_record_datasets))
    unscored = drop_unscored(sections)
    markdown = (
        "# KiRAG against budget-matched baselines (test questions)\n\n"
        f"Aligner: {aligner}, trained on {trained_on}; the best validation MRR. Run {flat['run']}. Dense MiniLM "
        f"retrieval for every baseline but hybrid, and the {retriever} retriever for KiRAG; K0 = 10, N = 20, L = 5; "
        "every answer from the packaged Qwen2.5-Coder-0.5B-Instruct "
        f"reader on the method's top 3 passages. rag+rerank's weight ({weight}) and KiRAG's retriever and passage "
        f"ranking (w_t {ranking.triple_weight:g}, w_r {ranking.retrieval_weight:g}, w_x {ranking.text_weight:g}"
        + (", the text against the steps' queries" if ranking.text_query == "steps" else "") + ") were chosen on "
        f"validation questions ({VALIDATION}.md), as was the Constructor's variant ({constructor_text(constructor)}); "
        "every figure here stands on test questions, scored once for this configuration.\n\n"
        "Recall, EM and F1 in %, with 95% BCa bootstrap intervals over questions. Differences in points; p: paired "
        "sign-flip test (exact up to 16 differing questions, else 20,000 random flips), adjusted by Holm within its "
        "table; a verdict reads the adjusted p at 0.05. Per-question scores: `benchmarks/results/kirag_eval/<part>/` "
        "(`python evaluate.py compare <files> --output_dir <dir>` recomputes any table). `hotpotqa_ircot`, the same "
        "100 questions over only their own 1,000 context passages, is no longer a part: it was not a second piece of "
        "evidence. Seconds are each run's wall clock on this 2-core machine, and some runs shared it with other "
        "jobs: compare costs by calls.\n\n"
        + (f"Not yet scored for this configuration: {', '.join(unscored)}.\n\n" if unscored else "")
        + "\n".join(sections[p] for p in PARTS if p in sections))
    write_results("kirag_eval", markdown, flat)


if __name__ == "__main__":
    main()
