"""Triple extraction settings side by side: demonstrations and new tokens, quality against gpt-3.5 and cost.

    python -m benchmarks.extraction_settings [--passages 40] [--settings 2:256 5:512]

Each setting (`demonstrations:max new tokens`) extracts the same sample with the LM, backend and batch of
`--kg_config` (by default MuSiQue train-100's, llama.cpp): a seeded random sample of the MuSiQue train-100
corpus's passages that have gpt-3.5 triples (HippoRAG's OpenIE, the only corpus here that has them). The
settings take turns, `--block` passages at a time, each from an empty prompt cache, so a noisy machine
slows them alike. Per setting: seconds and generated tokens a passage, passages left without triples,
precision and recall against gpt-3.5's triples (`kg.quality`, pooled over the passages), and the mean
per-passage F1 with its BCa interval; every other setting is tested against the first on per-passage F1
and recall (sign-flip, Holm over the family).

The rule, fixed before the run: a setting replaces the first for new corpora when its F1 is ahead at
Holm-adjusted p < 0.05 at no more than `MAX_COST` times the first's seconds a passage. The choice
touches no committed test figure: every corpus a test table stands on is extracted already.

Resumable: each setting's triples go to a KG store under runs/bench/extraction_settings/, and each
block's seconds to a log beside it; a rerun extracts only what a store lacks. Each setting's per-passage
scores and its blocks' log are committed under benchmarks/results/extraction_settings/.
"""

import argparse
import json
import random
import shutil
import sys
from dataclasses import replace
from pathlib import Path

from benchmarks.common import RESULTS, ROOT, SHARED_DATA, machine, parse_args, write_results, write_rows
from benchmarks.extraction_order import CountingLM, load_kg_config
from core.records import append_log
from evaluation.report import markdown_table
from evaluation.stats import holm, interval, p_text, paired_test, verdict
from kg.extraction import TripleExtractor, batched
from kg.openie_import import import_openie
from kg.quality import precision_recall
from kg.store import KGStore
from models.encoder import Encoder

SPLIT = ("Split: passages, not questions: a sample of the MuSiQue train-100 corpus, measured against gpt-3.5's "
         "triples; no question is answered, and no corpus a test figure stands on is extracted again.")
KG_CONFIG = ROOT / "configs" / "kg" / "musique_train_100.yaml"
OPENIE = SHARED_DATA / "musique" / "hipporag_train_100_openie_gpt35.json"
RUNS = ROOT / "runs" / "bench" / "extraction_settings"
MAX_COST = 2.0


def setting(text: str) -> tuple[int, int]:
    demos, _, tokens = text.partition(":")
    try:
        return int(demos), int(tokens)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a setting is DEMONSTRATIONS:MAX_NEW_TOKENS, got {text!r}") from None


def per_passage(ours: KGStore, reference: KGStore, pid: str) -> dict[str, float]:
    precision, recall = precision_recall({pid: ours.get(pid)}, {pid: reference.get(pid)}, [pid])
    return {"passage_id": pid, "triples": len(ours.get(pid)), "precision": precision, "recall": recall,
            "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0}


def commit_passage_scores(runs: dict[tuple[int, int], tuple], scores: dict[tuple[int, int], list[dict]]) -> None:
    """Each setting's per-passage scores (gzip JSON Lines) and its blocks' seconds and tokens under
    benchmarks/results/extraction_settings/, replacing what that folder held."""
    folder = RESULTS / "extraction_settings"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for (demos, tokens), (_, _, log) in runs.items():
        name = f"{demos}demos_{tokens}tokens"
        rows = [{"setting": f"{demos}:{tokens}", **row} for row in scores[(demos, tokens)]]
        write_rows(folder / f"{name}.jsonl.gz", rows)
        shutil.copyfile(log, folder / f"{name}.blocks.jsonl")


def extract(extractor: TripleExtractor, llama, store: KGStore, log: Path, block: list) -> None:
    """Extract the passages of `block` that `store` lacks, logging the seconds and tokens it took."""
    llama.forget()  # no setting starts from another's cached prompts
    generated = extractor.lm.generated
    summary = extractor.extract_into(store, block, show_progress=False)
    if summary["extracted"]:
        with append_log(log) as f:
            f.write(json.dumps({"passages": summary["extracted"], "seconds": summary["seconds"],
                                "generated": extractor.lm.generated - generated}) + "\n")


def cost(log: Path) -> dict[str, float]:
    blocks = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    passages = sum(b["passages"] for b in blocks)
    return {"seconds a passage": sum(b["seconds"] for b in blocks) / passages,
            "generated tokens a passage": sum(b["generated"] for b in blocks) / passages}


def choose(rows: list[dict], tests: list[dict]) -> dict:
    """The row of the setting for new corpora: the first, unless another's F1 is ahead of it at Holm-adjusted
    p < 0.05 at no more than `MAX_COST` times its seconds a passage (the best such F1)."""
    ahead = {t["setting"] for t in tests if t["metric"] == "f1" and t["verdict"] == "ahead"}
    eligible = [r for r in rows[1:] if f"{r['demonstrations']}:{r['max new tokens']}" in ahead
                and r["cost vs first"] <= MAX_COST]
    return max(eligible, key=lambda r: r["F1 a passage"], default=rows[0])


def main(args: argparse.Namespace) -> None:
    config = load_kg_config(args.kg_config)
    corpus = config.data.load().passages
    reference = KGStore(RUNS / "gpt35")
    if not len(reference):
        import_openie(OPENIE, corpus, reference)
    candidates = [p for p in corpus if reference.get(p.id)]
    passages = random.Random(args.seed).sample(candidates, min(args.passages, len(candidates)))
    lm = config.lm.build()
    counting, encoder = CountingLM(lm), Encoder(config.encoder)
    runs = {}
    for demos, tokens in args.settings:
        folder = RUNS / f"{demos}demos_{tokens}tokens"
        extractor = TripleExtractor(counting, encoder, num_demos=demos, batch_size=config.batch_size,
                                    max_new_tokens=tokens)
        runs[(demos, tokens)] = extractor, KGStore(folder / "kg"), folder / "blocks.jsonl"
    for number, block in enumerate(batched(passages, args.block), start=1):
        print(f"block {number}: {len(block)} passages, each setting in turn", file=sys.stderr)
        for extractor, store, log in runs.values():
            extract(extractor, lm.generator, store, log, block)

    ids = [p.id for p in passages]
    rows, scores = [], {}
    for (demos, tokens), (_, store, log) in runs.items():
        precision, recall = precision_recall({i: store.get(i) for i in ids}, {i: reference.get(i) for i in ids}, ids)
        scores[(demos, tokens)] = [per_passage(store, reference, i) for i in ids]
        f1 = [s["f1"] for s in scores[(demos, tokens)]]
        low, high = interval(f1)
        rows.append({"demonstrations": demos, "max new tokens": tokens, "passages": len(ids),
                     "precision vs gpt-3.5": precision, "recall vs gpt-3.5": recall, "F1 a passage": sum(f1) / len(f1),
                     "F1 95% interval": f"[{low:.3f}, {high:.3f}]",
                     "without triples": sum(not store.get(i) for i in ids),
                     "triples a passage": sum(len(store.get(i)) for i in ids) / len(ids), **cost(log)})
    first = rows[0]
    for row in rows:
        row["cost vs first"] = row["seconds a passage"] / first["seconds a passage"]
    tests = []
    base = scores[args.settings[0]]
    for key in args.settings[1:]:
        for metric in ("f1", "recall"):
            test = paired_test([s[metric] for s in base], [s[metric] for s in scores[key]])
            tests.append({"setting": f"{key[0]}:{key[1]}", "against": f"{args.settings[0][0]}:{args.settings[0][1]}",
                          "metric": metric, "n": test.n, "difference": test.diff,
                          "95% interval": f"[{test.low:+.3f}, {test.high:+.3f}]", "p": test.p})
    for test, adjusted in zip(tests, holm([t["p"] for t in tests]), strict=True):
        test["p (Holm)"] = adjusted
        test["verdict"] = verdict(test["difference"], adjusted)
    chosen = choose(rows, tests)
    choice = f"{chosen['demonstrations']} demonstrations, at most {chosen['max new tokens']} new tokens"
    setup = (f"{len(ids)} passages drawn with seed {args.seed} from the {len(candidates)} of "
             f"{Path(config.data.questions).name}'s corpus that have gpt-3.5 triples; {config.lm.name} on "
             f"{config.lm.resolved_backend()}, batch {config.batch_size}, demonstrations chosen by {config.encoder}, "
             f"the settings in turn, {args.block} passages at a time. Machine: {machine()}.")
    shown = [{**t, "p": p_text(t["p"]), "p (Holm)": p_text(t["p (Holm)"])} for t in tests]
    markdown = ("# Triple extraction settings\n\n" + SPLIT + "\n\n" + setup + "\n\n" + markdown_table(rows, list(rows[0]))
                + "\n## Paired tests\n\nPer passage, against the first setting; sign-flip tests, p adjusted by Holm "
                f"over the {len(tests)} comparisons.\n\n" + markdown_table(shown, list(shown[0]))
                + f"\n## Chosen for new corpora\n\n**{choice}**: the rule keeps the first setting unless another's F1 "
                f"is ahead at Holm-adjusted p < 0.05 at no more than {MAX_COST:g}x its seconds a passage.\n\n"
                "Per-passage scores and each block's seconds: `benchmarks/results/extraction_settings/`.\n")
    flat = {"setup": setup, "chosen.demonstrations": chosen["demonstrations"],
            "chosen.max new tokens": chosen["max new tokens"],
            **{f"{r['demonstrations']}:{r['max new tokens']}.{k}": v for r in rows for k, v in r.items()
               if isinstance(v, int | float)},
            **{f"paired.{t['setting']}.{t['metric']}.{k}": v for t in tests for k, v in t.items()
               if isinstance(v, int | float)}}
    commit_passage_scores(runs, scores)
    write_results("extraction_settings", markdown, flat)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kg_config", type=Path, default=KG_CONFIG, help="the corpus, LM, backend and batch")
    parser.add_argument("--settings", type=setting, nargs="+", default=[(2, 256), (5, 512)],
                        help="DEMONSTRATIONS:MAX_NEW_TOKENS, the first being the one in use")
    parser.add_argument("--passages", type=int, default=40)
    parser.add_argument("--block", type=int, default=10, help="passages each setting extracts before the next's turn")
    parser.add_argument("--seed", type=int, default=0)
    main(parse_args(parser))
