"""Aligner training: step throughput against sentence-transformers, and next-triple ranking before/after training.

    python -m benchmarks.aligner_training [--steps N] [--config CONFIG] [--ablation OVERLAY ...]
                                          [--retrain] [--skip_throughput] [--skip_training]

The throughput part runs on the MuSiQue train-100 silver chains over its gpt-3.5 triples
(`runs/chains/musique/chains.jsonl`, built here with `prepare.py kg` and `prepare.py chains` if absent),
with the settings of `configs/aligner/shared_cpu.yaml`. The ranking part trains on every dataset of
`--config` (configs/aligner/multi_cpu.yaml: build its chains files first, see the config).

1. Throughput (examples/s) of one training step: this project's `AlignerModule` (its encoder and
   `ChainContrastiveLoss`) against sentence-transformers' `MultipleNegativesRankingLoss`, each on its
   own copy of the same packaged all-MiniLM-L6-v2 weights, in a plain loop (no Trainer, so that the
   step itself is compared): tokenisation, forward, loss, backward, gradient clipping at 1.0 and an
   AdamW step. The same real training batches (16 queries, each with its positive and 10 candidate
   negatives) go to both, warm-up steps first, then timed steps interleaved (ours, ST, ST, ours, ...)
   so that drift in the machine's speed falls on both alike. The candidate pool is the same for both
   (every positive and every negative of the batch), so is the scale (1 / temperature) and the cosine
   similarity; the two losses are checked equal (dropout off) on the first batch before timing.
   Where the step's time goes: each side's model calls and the tokens they run, padding included,
   against the texts' own tokens. Ours runs the texts of each encoder call in length-sorted chunks
   of at most `EncoderConfig.chunk_tokens` padded tokens (512 on CPU), each padded to its own longest
   text (the same embeddings, padding being masked); ST pads each of its model calls to the longest
   text in it. The matrix products of forward and backward take most of the step, about in
   proportion to the tokens run; tokenisation, clipping and the AdamW step are a few percent.
2. Next-triple MRR and R@5 on each dataset's held-out test questions (a seeded random split by
   question, taken before chains were built) before and after training: the Aligner is trained through
   `train.py`'s CLI (in process) on `--config`, unless a finished training of it is there, and best.ckpt
   (the best validation MRR, on validation questions disjoint from the test ones) is evaluated. For
   every prefix of every test chain the positive is ranked among ALL its stored candidates (itself and
   every mined negative, not a sample); a question scores the mean over its prefixes; paired sign-flip
   tests, Holm over the table. The test questions are scored for the released recipe only.
   Each `--ablation` (a config overlaid on `--config`, such as configs/aligner/ablations/*.yaml: a
   decision the recipe made) is trained the same way into its own folder, and both checkpoints rank
   the VALIDATION questions neither trained on: the decision is made again there, never on test.
   Per-question scores go to `benchmarks/results/aligner_training/`.
3. With `--memory` (a separate run, below), the peak memory of one step; the training report quotes
   its last table.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch
import yaml

from benchmarks.common import RESULTS, ROOT, machine, parse_args, trained_datamodule, write_results
from core.chains import ChainRecord, read_chains, write_chains
from datamodules.aligner_datamodule import AlignerDataModule, ChainExamples, ExampleKey, collate
from evaluation.report import markdown_table, significance
from evaluation.scores import ScoredRun, write_scores
from evaluation.stats import p_text
from models.aligner import AlignerModule, adamw
from models.encoder import Encoder
from models.packaged import resolve_model_path
from models.training_cli import finished, lightning_cli

CONFIG = ROOT / "configs" / "aligner" / "shared_cpu.yaml"
MULTI = ROOT / "configs" / "aligner" / "multi_cpu.yaml"
CHAINS = ROOT / "runs" / "chains" / "musique" / "chains.jsonl"
PREPARE = (("kg", "configs/kg/musique_gpt35.yaml"), ("chains", "configs/chains/musique_gpt35.yaml"))
WARMUP = 3


def ensure_chains() -> None:
    if CHAINS.exists():
        return
    for command, config in PREPARE:
        subprocess.run([sys.executable, str(ROOT / "prepare.py"), command, "--config", config], cwd=ROOT, check=True)


def limited_chains(limit: int | None, folder: Path) -> Path:
    """The chains file, or (for quick checks) a copy holding only its first `limit` records."""
    if limit is None:
        return CHAINS
    path = folder / "chains.jsonl"
    write_chains(path, read_chains(CHAINS)[:limit])
    return path


# ---------------------------------------------------------------------------------------------- throughput


def fit_length(tokenizer, texts: list[str], limit: int) -> tuple[list[str], int]:
    """Cut texts longer than `limit` tokens (special tokens included) to `limit`; return them and how many were cut."""
    out, cut = [], 0
    for text in texts:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        if len(ids) + 2 > limit:
            text, cut = tokenizer.decode(ids[: limit - 2]), cut + 1
        out.append(text)
    return out, cut


def throughput_batches(chains: Path, batch_size: int, num_negatives: int, count: int) -> list[dict]:
    """`count` real training batches from the datamodule's sampler (epochs 0, 1, ...): full batches only,
    every example with exactly `num_negatives` negatives (MNRL takes one column per negative)."""
    data = AlignerDataModule(str(chains), val_fraction=0.0, batch_size=batch_size, num_negatives=num_negatives)
    data.setup("fit")
    loader = data.train_dataloader()
    batches, epoch = [], 0
    while len(batches) < count:
        loader.sampler.set_epoch(epoch)
        usable = [b for b in loader if len(b["queries"]) == batch_size and bool(b["negative_mask"].all())
                  and b["negative_mask"].shape[1] == num_negatives]
        if not usable and epoch > 0:
            raise ValueError(f"{chains}: no batch of {batch_size} examples with {num_negatives} negatives each")
        batches += usable
        epoch += 1
    return batches[:count]


def run_throughput(chains: Path, settings: dict, steps: int) -> tuple[list[dict], dict]:
    try:
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    except ImportError:
        sys.exit("the throughput part needs sentence-transformers: pip install sentence-transformers "
                 "(or run with --skip_throughput)")
    batch_size, n_neg = settings["data"]["init_args"]["batch_size"], settings["data"]["init_args"]["num_negatives"]
    model_cfg = settings["model"]["init_args"]
    tau, lr, wd = model_cfg["temperature"], model_cfg["lr"], model_cfg["weight_decay"]
    q_len, t_len = model_cfg["encoder"]["query_max_length"], model_cfg["encoder"]["max_length"]

    ours = AlignerModule(**model_cfg)
    ours.train()
    st = SentenceTransformer(resolve_model_path(model_cfg["encoder"]["name"]), device="cpu")
    st.max_seq_length = q_len  # one limit for all texts: the query's; triples are cut to theirs beforehand
    st.train()
    mnrl = MultipleNegativesRankingLoss(st, scale=1.0 / tau)
    ours_weights, st_weights = ours.encoder.model.state_dict(), st[0].auto_model.state_dict()
    shared = [k for k in ours_weights if k in st_weights]
    if not shared or not all(torch.equal(ours_weights[k], st_weights[k]) for k in shared):
        raise RuntimeError("the two models do not start from the same weights")
    # The model calls of each step and the tokens they run, padding included (the input ids of each call's
    # embedding layer: ST calls its model's `forward` directly, past the model's own hooks).
    padded = {"ours": [], "st": []}
    for method, model in (("ours", ours.encoder.model), ("st", st[0].auto_model)):
        model.embeddings.register_forward_pre_hook(
            lambda module, args, kwargs, seen=padded[method]: seen.append(kwargs["input_ids"].numel()),
            with_kwargs=True)

    # Texts longer than a limit are cut beforehand to the limit, so that neither side truncates again
    # (on this data none is: triples are far under 64 tokens, queries under 256).
    batches, cut = [], 0
    tokenizer = ours.encoder.tokenizer
    for b in throughput_batches(chains, batch_size, n_neg, WARMUP + steps):
        queries, n = fit_length(tokenizer, b["queries"], q_len)
        positives, m = fit_length(tokenizer, b["positives"], t_len)
        negatives = [fit_length(tokenizer, negs, t_len) for negs in b["negatives"]]
        cut += n + m + sum(k for _, k in negatives)
        batches.append({**b, "queries": queries, "positives": positives, "negatives": [t for t, _ in negatives]})

    def st_features(batch: dict) -> list[dict]:
        columns = [batch["queries"], batch["positives"]]
        columns += [[negs[j] for negs in batch["negatives"]] for j in range(n_neg)]
        return [st.preprocess(column) for column in columns]

    optimizers = {"ours": adamw(ours, lr, wd), "st": adamw(st, lr, wd)}  # the Aligner's, for both
    modules = {"ours": ours, "st": st}

    def loss_of(method: str, batch: dict) -> torch.Tensor:
        if method == "ours":
            return ours.loss(*ours.embed(batch))
        return mnrl(st_features(batch), None)

    def step(method: str, batch: dict) -> float:
        start = time.perf_counter()
        loss = loss_of(method, batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(modules[method].parameters(), 1.0)
        optimizers[method].step()
        optimizers[method].zero_grad(set_to_none=True)
        return time.perf_counter() - start

    # The same loss: with dropout off, both give the same value on the first batch.
    ours.eval(), st.eval()
    with torch.no_grad():
        check = {m: float(loss_of(m, batches[0])) for m in modules}
    ours.train(), st.train()

    times = {"ours": [], "st": []}
    work = {"ours": [], "st": []}  # (model calls, padded tokens) of each timed step
    for i, batch in enumerate(batches):
        order = ("ours", "st") if i % 2 == 0 else ("st", "ours")
        for method in order:
            padded[method].clear()
            seconds = step(method, batch)
            if i >= WARMUP:
                times[method].append(seconds)
                work[method].append((len(padded[method]), sum(padded[method])))

    def tokens(texts: list[str], limit: int) -> int:
        return sum(len(ids) for ids in tokenizer(texts, truncation=True, max_length=limit)["input_ids"])

    def unpadded(method: str, batch: dict) -> int:
        """Tokens of the texts a method encodes, without padding: ours each distinct triple once."""
        triples = batch["positives"] + [t for negs in batch["negatives"] for t in negs]
        return tokens(batch["queries"], q_len) + tokens(list(dict.fromkeys(triples)) if method == "ours" else triples,
                                                        t_len)

    unique = np.mean([len(set(b["positives"]) | {t for negs in b["negatives"] for t in negs})
                      for b in batches[WARMUP:]])
    names = {"ours": "ours: AlignerModule + ChainContrastiveLoss",
             "st": "sentence-transformers MultipleNegativesRankingLoss"}
    rows, flat = [], {}
    per_second = {m: batch_size * len(t) / sum(t) for m, t in times.items()}
    for method in ("ours", "st"):
        row = {"method": names[method], "timed steps": len(times[method]),
               "s/step": float(np.mean(times[method])), "s/step (median)": float(np.median(times[method])),
               "examples/s": per_second[method],
               "triple texts encoded/step": float(unique) if method == "ours" else float(batch_size * (1 + n_neg)),
               "model calls/step": float(np.mean([c for c, _ in work[method]])),
               "tokens/step (padded)": round(float(np.mean([t for _, t in work[method]]))),
               "tokens/step (unpadded)": round(float(np.mean([unpadded(method, b) for b in batches[WARMUP:]]))),
               "loss (dropout off, batch 1)": check[method]}
        rows.append(row)
        flat.update({f"throughput.{method}.{k}": v for k, v in row.items() if k != "method"})
    rows[0]["ours / ST"] = per_second["ours"] / per_second["st"]
    flat["throughput.ratio_ours_over_st"] = rows[0]["ours / ST"]
    flat["throughput.loss_abs_diff"] = abs(check["ours"] - check["st"])
    flat["throughput.texts_cut_to_limit"] = cut
    flat["throughput.batch"] = f"{batch_size} queries x (1 positive + {n_neg} negatives)"
    flat["throughput.candidates_per_query"] = batch_size * (1 + n_neg)
    flat["throughput.ours.chunk_tokens"] = ours.encoder.chunk_tokens
    return rows, flat


# ---------------------------------------------------------------------------------------------- ranking


def rank_metrics(encoder: Encoder, records: list[ChainRecord]) -> dict:
    """Rank of each positive among its own candidates (itself and ALL its stored negatives), every prefix.

    Ties count against the positive. Chains are taken in their stored order. `per question`: each
    question's mean reciprocal rank and R@5 over its prefixes (for paired tests).
    """
    examples = ChainExamples(records, num_negatives=10**9)
    keys = [(q, hop) for q, record in enumerate(records) for hop in range(len(record.chain))]
    items = [examples.example(ExampleKey(0, q, hop, None)) for q, hop in keys]
    queries = list(dict.fromkeys(e["query"] for e in items))
    triples = list(dict.fromkeys(t for e in items for t in (e["positive"], *e["negatives"])))
    q_vec = dict(zip(queries, encoder.encode(queries, "query", show_progress=False)))
    t_vec = dict(zip(triples, encoder.encode(triples, "passage", show_progress=False)))
    ranks, sizes = [], []
    for e in items:
        q = q_vec[e["query"]]
        positive = float(q @ t_vec[e["positive"]])
        negatives = np.array([q @ t_vec[t] for t in e["negatives"]], dtype=np.float32)
        ranks.append(1 + int((negatives >= positive).sum()))
        sizes.append(1 + len(e["negatives"]))
    ranks = np.array(ranks)
    owner = np.array([q for q, _ in keys])
    per_question = {"mrr": [float(np.mean(1.0 / ranks[owner == q])) for q in range(len(records))],
                    "r@5": [float(np.mean(ranks[owner == q] <= 5)) for q in range(len(records))]}
    return {"questions": len(records), "examples": len(items), "mean candidates": float(np.mean(sizes)),
            "mrr": float(np.mean(1.0 / ranks)), "r@1": float(np.mean(ranks == 1)), "r@5": float(np.mean(ranks <= 5)),
            "per question": per_question}


def train(configs: list[Path], retrain: bool) -> tuple[Path, dict]:
    """Train with train.py's CLI on `configs` (each overlaid on the ones before) into their run folder,
    unless a finished training is there already: one this function ran (read back with the timing it
    saved beside it) or one `train.py fit` ran to its last epoch (its seconds then unmeasured here);
    returns best.ckpt and the timing."""
    layers = [yaml.safe_load(c.read_text()).get("trainer") or {} for c in configs]
    root = ROOT / [t["default_root_dir"] for t in layers if t.get("default_root_dir")][-1]
    max_epochs = [t["max_epochs"] for t in layers if "max_epochs" in t][-1]
    best, last, record = (root / "checkpoints" / "best.ckpt", root / "checkpoints" / "last.ckpt",
                          root / "benchmark_training.json")
    if best.is_file() and not retrain:
        timing = json.loads(record.read_text()) if record.is_file() else {}
        if timing.get("checkpoint mtime_ns") == best.stat().st_mtime_ns:  # not retrained elsewhere since
            return best, timing
        if last.is_file() and finished(last, max_epochs):
            state = torch.load(last, map_location="cpu", weights_only=False, mmap=True)
            scores = [c["best_model_score"] for c in state["callbacks"].values() if c.get("best_model_score") is not None]
            return best, {"seconds": None, "steps": state["global_step"], "epochs": state["epoch"],
                          "best val/mrr": float(scores[0])}
    args = ["fit", *(a for c in configs for a in ("--config", str(c))), "--trainer.enable_progress_bar", "false",
            "--trainer.enable_model_summary", "false"]
    start = time.perf_counter()
    argv, sys.argv = sys.argv, sys.argv[:1]  # LightningCLI warns when this script's own options are in sys.argv
    try:
        cli = lightning_cli(args)
    finally:
        sys.argv = argv
        if "wandb" in sys.modules:  # end the run, or the next training in this process would log into it
            sys.modules["wandb"].finish()
    timing = {"seconds": time.perf_counter() - start, "steps": cli.trainer.global_step,
              "epochs": cli.trainer.current_epoch, "best val/mrr": float(cli.trainer.checkpoint_callback.best_model_score)}
    timing["checkpoint mtime_ns"] = best.stat().st_mtime_ns
    record.write_text(json.dumps(timing, indent=2) + "\n")
    return best, timing


def held_out_records(data: AlignerDataModule, questions: set[str]) -> dict[str, list[ChainRecord]]:
    """Each dataset's records of `questions` that have a complete chain, and all of them (`all`)."""
    kept = {name: [r for r in read_chains(path) if r.complete and r.chain and r.question_id in questions]
            for name, path in data.datasets.items()}
    return kept | {"all": [r for records in kept.values() for r in records]}


def ranked(model: str, encoder: Encoder, records: dict[str, list[ChainRecord]], source: str) -> ScoredRun:
    """Per question of `records` (over all datasets): its MRR and R@5 over its chain's prefixes, and its dataset."""
    scores = {}
    for dataset, rows in records.items():
        if dataset != "all" and rows:
            per_question = rank_metrics(encoder, rows)["per question"]
            scores |= {r.question_id: {"dataset": dataset, "mrr": per_question["mrr"][i], "r@5": per_question["r@5"][i]}
                       for i, r in enumerate(rows)}
    return ScoredRun(model, "chains", scores, source)


def of_dataset(run: ScoredRun, dataset: str) -> ScoredRun:
    keep = {q: row for q, row in run.scores.items() if dataset == "all" or row["dataset"] == dataset}
    return ScoredRun(run.method, run.corpus, keep, run.source)


def mean_of(run: ScoredRun, metric: str) -> float:
    return float(np.mean([row[metric] for row in run.scores.values()]))


def paired_rows(runs: list[tuple[ScoredRun, ScoredRun]], datasets: list[str]) -> list[dict]:
    """(run, against) per dataset on MRR and R@5: one family, Holm-adjusted (`evaluation.report.significance`)."""
    family, labels = [], []
    for run, against in runs:
        for dataset in datasets:
            mine, theirs = of_dataset(run, dataset), of_dataset(against, dataset)
            if mine.scores.keys() & theirs.scores.keys():
                family += [(mine, theirs, metric) for metric in ("mrr", "r@5")]
                labels += [dataset, dataset]
    return [row | {"dataset": d} for row, d in zip(significance(family), labels, strict=True)]


def save_scores(runs: dict[str, ScoredRun]) -> None:
    """Each ScoredRun's per-question figures under benchmarks/results/aligner_training/<name>.jsonl.gz."""
    folder = RESULTS / "aligner_training"
    folder.mkdir(exist_ok=True)
    for name, run in runs.items():
        write_scores(run, folder / f"{name}.jsonl.gz")


def run_training(config: Path, retrain: bool) -> tuple[list[dict], list[dict], dict, ScoredRun, AlignerDataModule]:
    """Train on every dataset of `config`, then rank each dataset's test questions with the base encoder
    and with best.ckpt, paired. Also returns the trained encoder's checkpoint and datamodule, for ablations."""
    best, timing = train([config], retrain)
    data = trained_datamodule(best)
    settings = yaml.safe_load(config.read_text())
    base = AlignerModule(**settings["model"]["init_args"]).encoder
    trained = AlignerModule.from_checkpoint(best).encoder.eval()
    train_n, val_n = Counter(data.train_record_datasets), Counter(data.val_record_datasets)
    composition = []
    flat = {"training.config": str(config.relative_to(ROOT)), "training.checkpoint": str(best.relative_to(ROOT)),
            **{f"training.{k}": v for k, v in timing.items()}}
    tested = held_out_records(data, {q for ids in data.test_ids.values() for q in ids})
    for name, path in data.datasets.items():
        records = read_chains(path)
        composition.append({"dataset": name, "chains file": str(Path(path).relative_to(ROOT)),
                            "questions": len(records), "complete chains": sum(r.complete for r in records),
                            "test questions": len(data.test_ids[name]),
                            "test questions with a complete chain": len(tested[name]),
                            "trained on": train_n[name], "validation": val_n[name]})
    before, after = ranked("base MiniLM", base, tested, "test"), ranked("trained", trained, tested, "test")
    save_scores({"test_base": before, "test_trained": after})
    datasets = [d for d, records in tested.items() if records]
    rows = paired_rows([(after, before)], datasets)
    for row in rows:
        flat.update({f"ranking.{row['dataset']}.{row['metric']}.{k}": v for k, v in row.items()
                     if k not in ("dataset", "metric", "method", "against")})
    for row in composition:
        flat.update({f"training.data.{row['dataset']}.{k}": v for k, v in row.items()
                     if k not in ("dataset", "chains file")})
    flat["training.questions"] = sum(r["questions"] for r in composition)
    flat["training.questions_outside_test"] = sum(r["questions"] - r["test questions"] for r in composition)
    flat["training.trained_on"] = sum(r["trained on"] for r in composition)
    flat["training.only_complete"] = data.hparams.only_complete
    ranking = [{"dataset": d, "questions": len(of_dataset(before, d).scores)}
               | {f"{m} {when}": mean_of(of_dataset(run, d), m) for m in ("mrr", "r@5")
                  for when, run in (("before", before), ("after", after))} for d in datasets]
    return composition, ranking, flat, rows, (best, trained, data)


DECISIONS = {"complete_only": "train on incomplete chains too (`only_complete: false`)",
             "store_negatives": "retrieve the negatives of MuSiQue kag_100's and HotpotQA ircot's chains from the "
                                "whole corpus, not from the gold passages' KG"}


def run_ablation(config: Path, overlay: Path, recipe: tuple[Path, Encoder, AlignerDataModule], retrain: bool
                 ) -> tuple[ScoredRun, ScoredRun, dict]:
    """Train `config` overlaid with `overlay`, and rank the validation questions that neither it nor the
    recipe trained on (complete chains of the recipe's chains files, so the negatives are the recipe's)
    with both checkpoints."""
    best, timing = train([config, overlay], retrain)
    data = trained_datamodule(best)
    _, recipe_encoder, recipe_data = recipe
    if data.test_ids != recipe_data.test_ids:
        raise RuntimeError(f"{overlay}: its test questions are not the recipe's (an overlay must not change the split)")
    trained_on = {r.question_id for r in data.train_records + recipe_data.train_records}
    held = {r.question_id for r in data.val_records + recipe_data.val_records} - trained_on
    records = held_out_records(recipe_data, held)
    name = overlay.stem
    ablated = ranked(name, AlignerModule.from_checkpoint(best).encoder.eval(), records, "validation")
    mine = ranked("recipe", recipe_encoder, records, "validation")
    save_scores({f"validation_{name}": ablated, f"validation_{name}_recipe": mine})
    flat = {f"ablation.{name}.config": str(overlay.relative_to(ROOT)),
            **{f"ablation.{name}.{k}": v for k, v in timing.items()},
            f"ablation.{name}.trained_on": len(data.train_records),
            f"ablation.{name}.validation_questions": len(ablated.scores)}
    return ablated, mine, flat


def ablation_report(results: list[tuple[ScoredRun, ScoredRun, dict]]) -> tuple[str, dict]:
    """One family over every ablation: each against the recipe on MRR and R@5, per dataset and over all;
    then, per decision, whether the recipe's choice still holds on validation (the higher MRR over all)."""
    datasets = list(dict.fromkeys(d for ablated, _, _ in results for d in
                                  [row["dataset"] for row in ablated.scores.values()])) + ["all"]
    rows = paired_rows([(ablated, recipe) for ablated, recipe, _ in results], datasets)
    flat, lines = {}, []
    for i, row in enumerate(rows):
        flat.update({f"ablation.paired.{i}.{k}": v for k, v in row.items()})
    for ablated, recipe, _ in results:
        ours, theirs = mean_of(recipe, "mrr"), mean_of(ablated, "mrr")
        test = next(r for r in rows if r["method"] == ablated.method and r["dataset"] == "all" and r["metric"] == "mrr")
        holds = ours >= theirs
        flat[f"ablation.{ablated.method}.decision_holds"] = holds
        lines.append(f"- {DECISIONS.get(ablated.method, ablated.method)}: {'holds' if holds else 'does not hold'} on "
                     f"validation (MRR {ours:.3f} with it, {theirs:.3f} without, over {test['questions']} questions; "
                     f"difference {test['difference']:+.1f} points, Holm-adjusted p {p_text(test['p (Holm)'])}: "
                     f"{test['verdict']}).")
    shown = [{"ablation": r["method"], "dataset": r["dataset"], "metric": r["metric"], "questions": r["questions"],
              "difference (points)": f"{r['difference']:+.1f} ({r['low']:+.1f}, {r['high']:+.1f})",
              "p": p_text(r["p"]), "p (Holm)": p_text(r["p (Holm)"]), "verdict": r["verdict"]} for r in rows]
    return markdown_table(shown, list(shown[0])) + "\n" + "\n".join(lines) + "\n", flat


# ---------------------------------------------------------------------------------------------- main


def main(args: argparse.Namespace) -> None:
    settings = yaml.safe_load(CONFIG.read_text())
    ensure_chains()
    m, d = settings["model"]["init_args"], settings["data"]["init_args"]
    e = m["encoder"]
    flat = {"machine": machine(),
            "encoder": f"all-MiniLM-L6-v2 (packaged), {e['pooling']} pooling, float32",
            "settings": (f"{CONFIG.relative_to(ROOT)}: temperature {m['temperature']} (ST scale {1 / m['temperature']:g}),"
                         f" lr {m['lr']:g}, weight decay {m['weight_decay']}, query/triple max length "
                         f"{e['query_max_length']}/{e['max_length']}, batch {d['batch_size']},"
                         f" {d['num_negatives']} negatives"),
            "chains": str(CHAINS.relative_to(ROOT)) + (f" (first {args.limit} records)" if args.limit else "")}
    parts = [f"# Aligner training\n\nMachine: {flat['machine']}. Encoder: {flat['encoder']}.\n"
             f"Throughput settings: {flat['settings']}. Data: {flat['chains']}, MuSiQue train-100 with its gpt-3.5 "
             "triples.\n"]
    with tempfile.TemporaryDirectory() as tmp:
        chains = limited_chains(args.limit, Path(tmp))
        if not args.skip_throughput:
            rows, part = run_throughput(chains, settings, args.steps)
            flat.update(part)
            columns = ["method", "timed steps", "s/step", "s/step (median)", "examples/s", "ours / ST",
                       "triple texts encoded/step", "model calls/step", "tokens/step (padded)",
                       "tokens/step (unpadded)", "loss (dropout off, batch 1)"]
            parts.append(
                "## Training step throughput\n\n"
                f"Plain loop, no Trainer: tokenise, forward, loss, backward, clip 1.0, AdamW step. Batch "
                f"{part['throughput.batch']}: real training batches, the same ones for both, {WARMUP} warm-up steps "
                f"each then {args.steps} timed steps each, interleaved. Both score each query against the same "
                f"{part['throughput.candidates_per_query']} candidates (every positive and negative of the batch) "
                "at the same scale. Lengths: queries limited to 256 tokens and triples to 64 on both sides (ST "
                f"max_seq_length 256; texts over a limit cut beforehand: {cut_note(part)}). Ours embeds each distinct "
                "triple text once per batch; ST embeds every column entry. Ours runs the texts of each encoder call "
                f"in length-sorted chunks of at most {part['throughput.ours.chunk_tokens']} padded tokens "
                "(`EncoderConfig.chunk_tokens`), each padded only to its own longest text; ST pads each model call "
                "to its longest text. Model calls and the tokens they run (padded) are counted at each model's "
                "embedding layer; unpadded: the tokens of the texts themselves.\n\n" + markdown_table(rows, columns))
    if not args.skip_training:
        composition, ranking, t, paired, recipe = run_training(args.config.resolve(), args.retrain)
        flat.update(t)
        results = []
        for overlay in args.ablation:
            ablated, mine, a = run_ablation(args.config.resolve(), overlay.resolve(), recipe, args.retrain)
            results.append((ablated, mine, a))
            flat.update(a)
        trained = ("have a chain (complete or not) and are trained on and the rest validate"
                   if not t["training.only_complete"] else
                   "have a complete chain and are trained on and the rest of the complete ones validate")
        seconds = (f"{t['training.seconds']:.0f} s on this machine, validation included" if t["training.seconds"]
                   else "trained by `train.py fit` before this run, its time not measured here")
        shown = [{"dataset": r["dataset"], "metric": r["metric"], "questions": r["questions"],
                  "difference (points)": f"{r['difference']:+.1f} ({r['low']:+.1f}, {r['high']:+.1f})",
                  "p": p_text(r["p"]), "p (Holm)": p_text(r["p (Holm)"]), "verdict": r["verdict"]} for r in paired]
        parts.append(
            "## Training on every dataset\n\n"
            f"`python train.py fit --config {t['training.config']}`: {t['training.steps']} steps, "
            f"{t['training.epochs'] + 1} epochs, {seconds}; the evaluated checkpoint is `{t['training.checkpoint']}`, "
            f"the best validation MRR ({t['training.best val/mrr']:.3f}). {t['training.questions']} questions in all, "
            f"{t['training.questions_outside_test']} outside the test splits, of which {t['training.trained_on']} "
            f"{trained}. Each dataset's test questions are a seeded random split by question taken before its "
            "chains were built (`test_fraction`; 1 for a dataset that is a test set only), never trained or "
            "validated on.\n\n"
            + markdown_table(composition, list(composition[0]))
            + "\n## Next-triple ranking on the held-out test questions, per dataset\n\n"
            "Test questions, scored once for the released recipe. Every prefix of every test question's complete "
            "chain; the positive ranked among itself and all its stored negatives (ties count against it); each "
            "question's MRR and R@5 are means over its prefixes. Before: the base all-MiniLM-L6-v2; after: "
            "best.ckpt.\n\n" + markdown_table(ranking, list(ranking[0]))
            + "\nAfter against before: paired sign-flip tests over questions, one family (Holm) over the "
            "table's rows; differences in points with their 95% BCa intervals.\n\n" + markdown_table(shown, list(shown[0])))
        if results:
            text, a = ablation_report(results)
            flat.update(a)
            parts.append(
                "## Decisions made again on validation questions\n\n"
                f"Each overlay on `{t['training.config']}` trained the same way into its own folder; its best.ckpt "
                "and the recipe's rank the validation questions neither trained on (complete chains, the recipe's "
                "chains files, so the same negatives), never the test questions. Ablation against recipe: paired "
                "sign-flip tests, Holm over the whole table. A decision holds when the recipe's validation MRR over "
                "all these questions is at least the ablation's (the rule that picks checkpoints).\n\n" + text)
    memory = RESULTS / f"{args.output_name}_memory.md"
    if memory.is_file():  # written by `--memory`, a separate run (each setting in a fresh process)
        parts.append("## Memory of one step, plain against cached loss\n\nFrom `python -m benchmarks.aligner_training "
                     f"--memory` (`benchmarks/results/{memory.name}`):\n\n"
                     + memory.read_text().split("\n\n", 3)[-1])
    write_results(args.output_name, "\n".join(parts), flat)


def cut_note(part: dict) -> str:
    n = part["throughput.texts_cut_to_limit"]
    return "none was over" if n == 0 else f"{n} texts"


# ---------------------------------------------------------------------------------------------- memory
# `--memory` (alone, separately from the parts above): the peak memory of one training step at each
# batch size in `--memory_batch_sizes`, with the plain loss and with the gradient cache
# (`AlignerModule(cache_mini_batch=--memory_mini_batch)`), each setting in a fresh process:
#
#     python -m benchmarks.aligner_training --memory [--memory_batch_sizes 16 64 256]
#                                           [--memory_mini_batch 16] [--memory_device cpu|cuda]


def memory_batch(batch_size: int, num_negatives: int) -> dict:
    """`batch_size` examples of the MuSiQue chains, each with up to `num_negatives` negatives: one per question
    (its prefix drawn from a fixed seed), then, beyond the questions available, copies of them whose texts
    carry a copy number, so that no two texts repeat across questions, as in a batch of distinct questions."""
    records = [r for r in read_chains(CHAINS) if r.chain]
    examples = ChainExamples(records, num_negatives=num_negatives)
    rng = np.random.default_rng(0)
    out = []
    for i in range(batch_size):
        copy, q = divmod(i, len(records))
        e = examples.example(ExampleKey(i, q, int(rng.integers(len(records[q].chain))), i))
        if copy:
            mark = f" ({copy})"
            e = {**e, "query": e["query"] + mark, "positive": e["positive"] + mark,
                 "negatives": [t + mark for t in e["negatives"]]}
        out.append(e)
    return collate(out)


def _rss_mib(field: str) -> float:
    """VmRSS (now) or VmHWM (peak since the last reset) of this process, in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def memory_child(setting: dict) -> dict:
    """One training step (loss, backward, clipping, AdamW step) of one setting, in this (fresh) process."""
    import resource

    config = yaml.safe_load(CONFIG.read_text())["model"]["init_args"]
    module = AlignerModule(**{**config, "cache_mini_batch": setting["mini_batch"]}).to(setting["device"]).train()
    optimizer = torch.optim.AdamW([p for p in module.parameters() if p.requires_grad], lr=config["lr"])
    batch = memory_batch(setting["batch_size"], setting["negatives"])
    cuda = setting["device"].startswith("cuda")
    torch.manual_seed(0)
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated() / 2**20
    else:
        before = _rss_mib("VmRSS")
        try:  # reset the peak resident size (Linux >= 4.0) so that loading the model does not count
            Path("/proc/self/clear_refs").write_text("5")
            reset = True
        except OSError:
            reset = False
    start = time.perf_counter()
    try:
        loss = module.training_loss(batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    except torch.cuda.OutOfMemoryError:
        return {"error": "out of memory"}
    if cuda:
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() / 2**20
    else:
        peak = _rss_mib("VmHWM") if reset else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    seconds = time.perf_counter() - start
    distinct = len(set(batch["positives"]) | {t for negatives in batch["negatives"] for t in negatives})
    return {"peak MiB": round(peak), "step MiB": round(peak - before), "before MiB": round(before), "s/step": seconds,
            "loss": float(loss), "triple texts": distinct,
            "peak measure": "cuda max_memory_allocated" if cuda else ("VmHWM" if reset else "ru_maxrss")}


def run_memory(args: argparse.Namespace) -> None:
    """Every (batch size, plain or cached) setting in a fresh process; one table."""
    ensure_chains()
    d = yaml.safe_load(CONFIG.read_text())["data"]["init_args"]
    device = args.memory_device or ("cuda" if torch.cuda.is_available() else "cpu")
    rows, flat = [], {"machine": machine(), "memory.device": device, "memory.mini_batch": args.memory_mini_batch,
                      "memory.negatives": d["num_negatives"], "memory.config": str(CONFIG.relative_to(ROOT))}
    for batch_size in args.memory_batch_sizes:
        for method, mini_batch in (("plain", None), ("cached", args.memory_mini_batch)):
            setting = {"batch_size": batch_size, "mini_batch": mini_batch, "device": device,
                       "negatives": d["num_negatives"]}
            command = [sys.executable, "-m", "benchmarks.aligner_training", "--memory_child", json.dumps(setting)]
            if args.threads:
                command += ["--threads", str(args.threads)]
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
            if done.returncode == 0:
                result = json.loads(done.stdout.strip().splitlines()[-1])
            else:  # killed by the kernel's out-of-memory handler, or failed
                result = {"error": f"exit code {done.returncode}: {done.stderr.strip().splitlines()[-1:]}"}
            name = method if mini_batch is None else f"cached, {mini_batch} texts a pass"
            row = {"batch": batch_size, "method": name, **result}
            rows.append(row)
            flat.update({f"memory.{batch_size}.{method}.{k}": v for k, v in result.items()})
            print(row, flush=True)
    columns = ["batch", "method", "triple texts", "before MiB", "peak MiB", "step MiB", "s/step", "loss", "error"]
    markdown = (
        f"# Aligner training: memory of one step\n\nSplit: training chains (MuSiQue train-100's), for memory only."
        f"\n\nMachine: {flat['machine']}. Device: {device}. "
        f"{CONFIG.relative_to(ROOT)} (all-MiniLM-L6-v2, float32), {d['num_negatives']} negatives per query; "
        "one question per example (beyond the questions available, copies with marked, distinct texts); "
        "dropout on. One step: loss, backward, clipping, AdamW step (its state allocated in the step, alike "
        "for both), each setting in a fresh process. `step MiB`: the peak during the step minus the memory "
        "before it (on CPU resident memory, the peak reset before the step; on GPU allocated memory). "
        "The cached loss gives the same gradients (tests/losses/test_cached.py); its losses differ from the "
        "plain ones here only through dropout, drawn per mini-batch.\n\n"
        + markdown_table(rows, [c for c in columns if any(c in r for r in rows)]))
    write_results(f"{args.output_name}_memory", markdown, flat)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=30, help="timed training steps per method")
    parser.add_argument("--config", type=Path, default=MULTI, help="the training config of the before/after ranking")
    parser.add_argument("--ablation", type=Path, nargs="*", default=[],
                        help="configs overlaid on --config, each trained and ranked against it")
    parser.add_argument("--retrain", action="store_true", help="train again even if the config's best.ckpt exists")
    parser.add_argument("--skip_throughput", action="store_true")
    parser.add_argument("--skip_training", action="store_true")
    parser.add_argument("--output_name", default="aligner_training", help="results name under benchmarks/results/")
    parser.add_argument("--limit", type=int, default=None, help=argparse.SUPPRESS)  # first N chain records: checks
    parser.add_argument("--memory", action="store_true",
                        help="only measure the peak memory of one step, plain loss against the gradient cache")
    parser.add_argument("--memory_batch_sizes", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--memory_mini_batch", type=int, default=16, help="texts per forward pass, cached loss")
    parser.add_argument("--memory_device", default=None, help="cpu or cuda (default: cuda when available)")
    parser.add_argument("--memory_child", default=None, help=argparse.SUPPRESS)  # one setting, as JSON
    parsed = parse_args(parser)
    if parsed.memory_child:
        print(json.dumps(memory_child(json.loads(parsed.memory_child))))
    elif parsed.memory:
        run_memory(parsed)
    else:
        main(parsed)
