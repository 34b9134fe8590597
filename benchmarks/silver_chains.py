"""Silver chains against the gold chains that MuSiQue and 2Wiki carry, by hop count and dataset.

    python -m benchmarks.silver_chains

Each question's chain is built twice from the triples of its gold passages, as `prepare.py chains`
builds it (`training_data/chains.py`, `ChainBuilder`): in `search` mode, without the ground truth
(what HotpotQA and any new training set get), and in ground-truth mode (MuSiQue's decomposition,
2Wiki's evidences), the reference upper line. Each chain is then scored against the gold chain
(`training_data/chain_quality.py`, `recovery`):

- a hop is a MuSiQue sub-question with its sub-answer (recovered by a triple containing the
  sub-answer; the answer or an alias at the last hop) or a 2Wiki evidence triple (recovered by a
  triple with token F1 >= 0.5 to it);
- per hop: `at hop` (the chain's j-th triple recovers hop j), `anywhere` (some chain triple does),
  `in triples` (some triple of the gold passages does: what the triples allow at best), `same as gt`
  (the search chain's j-th triple is the ground-truth-mode chain's j-th);
- per question: `exact` (one triple per hop, each recovering its hop, in order; 2Wiki comparison
  and bridge_comparison in any order), `all anywhere`, `all in triples` (the ceiling the triples
  set), `ends in answer`, `complete` (the builder's own flag) and `exact if complete` (the share
  of flagged-complete chains that are exact: what training on complete chains only gets).

MuSiQue: hipporag_train_100 over HippoRAG's gpt-3.5 triples (`configs/chains/musique_gpt35.yaml`;
the store is imported from `configs/kg/musique_gpt35.yaml` when absent), grouped by the number of
decomposition steps, on all 100 questions and on the two halves of the Aligner's split
(`configs/aligner/shared_cpu.yaml`: its `test_fraction` and seed over the chains file's order, or the
questions' order when there is no chains file). The search mode's rules were revised by reading
its failures on the Aligner's TRAINING half only (and the figures of both halves were seen once before
and once after): the `aligner test` rows are the least biased figure, `all` is optimistic.
MuSiQue kag_100 over the project's LM triples of its gold passages
(`configs/chains/musique_kag_100.yaml`): 100 other MuSiQue questions, which the rules were never
revised on, so all of it is held out for the builder.
2Wiki: hoprag_10 over the project's LM triples (`configs/chains/2wiki_hoprag_10.yaml`), by type and
number of evidences; skipped, with a line saying so, while its KG store lacks the gold passages
(the LM extracts them with `prepare.py kg --config configs/kg/2wiki_hoprag_10.yaml`).
"""

import argparse
import os
import time
from pathlib import Path

import yaml

from benchmarks.common import RESULTS, ROOT, machine, parse_args, write_results, write_rows
from core.config import dataclass_from
from core.records import read_records, split_held_out
from evaluation.report import markdown_table
from kg.build import KGConfig, build_kg
from kg.graph import KnowledgeGraph
from kg.store import KGStore
from training_data.chain_quality import recovery, summarise_recovery
from training_data.chains import ChainsConfig, build_chains
from training_data.silver_chains import ChainBuilder

SPLIT = (  # which questions the figures stand on
    "Split: as each table says: the search rules were revised on the Aligner's MuSiQue training questions"
    ' only; its test questions and MuSiQue kag_100 were never used to revise them.')

CONFIGS = ROOT / "configs"
RECORDS = RESULTS / "silver_chains" / "records.jsonl.gz"
DATASETS = {  # name -> (chains config, KG config: built here when it imports triples, never with the LM)
    "musique": (CONFIGS / "chains" / "musique_gpt35.yaml", CONFIGS / "kg" / "musique_gpt35.yaml"),
    "musique_kag": (CONFIGS / "chains" / "musique_kag_100.yaml", CONFIGS / "kg" / "musique_kag_100.yaml"),
    "2wiki": (CONFIGS / "chains" / "2wiki_hoprag_10.yaml", CONFIGS / "kg" / "2wiki_hoprag_10.yaml"),
}
ALIGNER_CONFIG = CONFIGS / "aligner" / "shared_cpu.yaml"
MODES = {"search": False, "gt": True}
COLUMNS = ["dataset", "questions set", "group", "mode", "questions", "hops", "at hop", "anywhere", "in triples",
           "same as gt", "at hop 1/2/3/4", "exact", "all anywhere", "all in triples", "ends in answer", "complete",
           "exact if complete"]
SHARES = {"at hop": "at_hop", "anywhere": "anywhere", "in triples": "in_triples", "same as gt": "same_as_reference",
          "exact": "exact", "all anywhere": "all_anywhere", "all in triples": "all_in_triples",
          "ends in answer": "ends_in_answer", "complete": "complete", "exact if complete": "exact_if_complete"}


def load_config(path: Path, cls, ignore: tuple[str, ...] = ()):
    """`ignore`: keys that do not decide what is measured here (the negatives' settings: a chains config
    with `k0: 0`, which ChainsConfig refuses, is still measured)."""
    return dataclass_from(cls, {k: v for k, v in yaml.safe_load(path.read_text()).items() if k not in ignore})


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def aligner_halves(question_ids: list[str]) -> dict[str, set[str]]:
    """The Aligner's training and test questions, split as its datamodule splits the chains file."""
    settings = yaml.safe_load(ALIGNER_CONFIG.read_text())["data"]["init_args"]
    chains = settings["chains"]
    chains = Path(chains.get("musique", next(iter(chains.values()))) if isinstance(chains, dict) else chains)
    order = [r["question_id"] for _, r in read_records(chains)] if chains.exists() else []
    if sorted(order) != sorted(question_ids):
        order = question_ids
    train, test = split_held_out(order, settings["test_fraction"], settings["seed"])
    return {"aligner train": set(train), "aligner test": set(test)}


def group_of(dataset: str, question) -> str:
    if question.decomposition:
        return f"{len(question.decomposition)}hop"
    return f"{question.type} ({len(question.gold_triples)})"


def evaluate(dataset: str, config: ChainsConfig, kg_config: Path | None) -> tuple[list[dict], str | None]:
    """Recovery records (one per question and mode) of one dataset, or a line saying why it is skipped."""
    store_path = Path(config.kg_store)
    hint = "`prepare.py kg` builds it"
    if not store_path.is_dir() and kg_config is not None:
        kg = load_config(kg_config, KGConfig)
        if kg.openie and Path(kg.store) == store_path:
            print(f"{dataset}: importing the KG store {store_path} ({shown(kg_config)})")
            build_kg(kg)
        else:
            hint = (f"the LM extracts it: `prepare.py kg --config {shown(kg_config)}`; "
                    "the gold passages suffice here")
    if not store_path.is_dir():
        return [], f"{dataset}: skipped, its KG store {store_path} does not exist ({hint})"
    benchmark = config.data.load()
    store = KGStore(store_path, create=False)
    questions = [q for q in benchmark.questions if not store.missing(q.gold_passage_ids)]
    if not questions:
        return [], f"{dataset}: skipped, its KG store {store_path} has none of the gold passages' triples yet"
    note = None
    if len(questions) < len(benchmark.questions):
        note = (f"{dataset}: {len(benchmark.questions) - len(questions)} of {len(benchmark.questions)} questions "
                f"left out, their gold passages are not all in {store_path} yet")
    passages = benchmark.passage_by_id()
    kg = KnowledgeGraph(store, None, passages)
    halves = aligner_halves([q.id for q in benchmark.questions]) if dataset == "musique" else {}
    chains, seconds = {}, {}
    for mode, use_gt in MODES.items():
        began = time.perf_counter()
        chains[mode] = build_chains(questions, passages, kg, ChainBuilder(use_gt, config.beam_size))
        seconds[mode] = time.perf_counter() - began
    records = []
    for i, q in enumerate(questions):
        pool = kg.get_many(q.gold_passage_ids)
        for mode in MODES:
            reference = chains["gt"][i] if mode == "search" else None
            record = recovery(q, chains[mode][i], pool, reference)
            if record is not None:
                sets = ["all"] + [name for name, ids in halves.items() if q.id in ids]
                records.append(record | {"dataset": dataset, "question_id": q.id, "group": group_of(dataset, q),
                                         "mode": mode, "sets": sets, "seconds": seconds[mode] / len(questions)})
    return records, note


def percent(value) -> str:
    return "" if value is None else f"{100 * value:.1f}"


def rows_of(records: list[dict]) -> list[dict]:
    rows = []
    datasets = list(dict.fromkeys(r["dataset"] for r in records))
    for dataset in datasets:
        mine = [r for r in records if r["dataset"] == dataset]
        sets = [s for s in ("all", "aligner train", "aligner test") if any(s in r["sets"] for r in mine)]
        groups = sorted({r["group"] for r in mine})
        for questions_set in sets:
            for group in groups + ["all"]:
                for mode in MODES:
                    chosen = [r for r in mine if questions_set in r["sets"] and r["mode"] == mode
                              and group in (r["group"], "all")]
                    if chosen:
                        rows.append({"dataset": dataset, "questions set": questions_set, "group": group,
                                     "mode": mode, **summarise_recovery(chosen)})
    return rows


def figures(rows: list[dict]) -> dict:
    """The rows' figures under flat keys `<dataset>.<questions set>.<group>.<mode>.<figure>`."""
    names = ("dataset", "questions set", "group", "mode")
    flat = {}
    for row in rows:
        key = ".".join(str(row[k]).replace(" ", "_") for k in names)
        flat.update({f"{key}.{k}": v for k, v in row.items() if k not in names and v is not None})
    return flat


def run() -> None:
    os.chdir(ROOT)  # the configs' paths are relative to the project root
    began = time.perf_counter()
    records, notes = [], []
    for dataset, (chains_config, kg_config) in DATASETS.items():
        found, note = evaluate(dataset, load_config(chains_config, ChainsConfig, ("k0", "max_negatives")), kg_config)
        records += found
        if note:
            print(note)
            notes.append(note)
    rows = rows_of(records)
    flat = {"machine": machine(), "seconds": round(time.perf_counter() - began, 2)} | figures(rows)
    for i, note in enumerate(notes):
        flat[f"note.{i}"] = note
    table = []
    for row in rows:
        cells = {k: row[k] for k in ("dataset", "questions set", "group", "mode", "questions", "hops")}
        cells |= {column: percent(row.get(key)) for column, key in SHARES.items()}
        cells["at hop 1/2/3/4"] = "/".join(percent(row[f"at_hop_{j}"]) for j in range(1, 5) if f"at_hop_{j}" in row)
        table.append(cells)
    markdown = (
        "# Silver chains against gold chains\n\n"
        f"{SPLIT}\n\n"
        f"Machine: {flat['machine']}; {flat['seconds']} s in all. Each question's chain is built from the triples "
        "of its gold passages in `search` mode (no ground truth: what HotpotQA gets) and in ground-truth mode "
        "(`gt`: MuSiQue decompositions, 2Wiki evidences), and scored against the gold chain. Shares in %; "
        "`questions`/`hops` are each row's sample sizes (per-hop columns are over hops, the others over "
        "questions; `at hop 1/2/3/4` over the questions with that hop; `exact if complete` over the chains "
        "flagged complete). Definitions: the docstring of `benchmarks/silver_chains.py`.\n\n"
        "MuSiQue: hipporag_train_100 over gpt-3.5 triples; `group` is the number of decomposition steps. "
        "The search mode's rules were revised by reading its failures on the `aligner train` questions only, "
        "so `aligner test` is the least biased figure and `all` is optimistic. MuSiQue kag_100 (`musique_kag`): "
        "100 other MuSiQue questions over this project's own triples (packaged LM), never used to revise the "
        "rules.\n"
        + "".join(f"\n{note}.\n" for note in notes) + "\n"
        + markdown_table(table, COLUMNS)
        + f"\nPer question and mode, what every row is computed from: `{RECORDS.relative_to(ROOT)}`.\n")
    write_rows(RECORDS, records)
    write_results("silver_chains", markdown, flat)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parse_args(parser)
    run()
