"""The CUDA path in one short run, for a session lent a GPU machine.

The paper recipe (configs/aligner/paper_e5_large_ddp.yaml) through `train.py fit`, changed only by
overrides of its YAML on the command line (one device, a batch of `--batch_size` questions, the cached
loss), on an encoder of E5-large-v2's shape with random weights (the GPU machine reaches no model hub)
and synthetic chains whose texts have the lengths of real ones: seconds per optimizer step in
bf16-mixed with the cached loss, and the plain loss at the same batch (its peak memory, or out of
memory). Then exact inner-product search with faiss on the CPU and, where faiss has GPU support, on
the GPU.

    python -m benchmarks.gpu_check            # on the GPU machine
    python -m benchmarks.gpu_check --tiny     # the same path on this CPU, with a 2-layer encoder

The GPU machine lacks some of the project's pure-Python dependencies; carry them as wheels (see the
device tool's README): jsonargparse, docstring-parser, typeshed-client, bm25s, PyStemmer, datasets,
dill and multiprocess (faiss-cpu too, for the search part). The script names any module it still
cannot import before it starts.
"""

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import lightning as L
import numpy as np
import torch

from benchmarks.common import ROOT, machine, write_results
from core.chains import ChainRecord, write_chains
from core.types import Triple
from evaluation.report import markdown_table

RECIPE = ROOT / "configs" / "aligner" / "paper_e5_large_ddp.yaml"
E5_LARGE = {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096}
TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}
NEEDED = ["jsonargparse", "docstring_parser", "typeshed_client", "bm25s", "Stemmer", "datasets", "transformers"]


class StepTimer(L.Callback):
    """Writes each optimizer step's seconds (the device synchronised at both ends) and the peak memory to `output`."""

    def __init__(self, output: str) -> None:
        self.output, self.seconds, self.start = output, [], 0.0

    def _sync(self) -> None:
        if torch.cuda.is_available():
            torch.cuda.synchronize()

    def on_train_batch_start(self, trainer, module, batch, batch_idx) -> None:
        self._sync()
        self.start = time.perf_counter()

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx) -> None:
        self._sync()
        self.seconds.append(time.perf_counter() - self.start)
        # rewritten every step, so a run that then runs out of memory keeps the steps it timed
        peak = torch.cuda.max_memory_allocated() / 2**20 if torch.cuda.is_available() else None
        Path(self.output).write_text(json.dumps({"step_seconds": self.seconds, "peak_mib": peak}))


def encoder_folder(folder: Path, shape: dict) -> Path:
    """A BERT of `shape` with random weights and a WordPiece tokenizer over made-up words (`w0` ...)."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "<", ">", ";", ".", ":"]
    vocab += [f"w{i}" for i in range(30522 - len(vocab))]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertTokenizerFast(vocab_file=str(folder / "vocab.txt")).save_pretrained(folder)
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(vocab), max_position_embeddings=512, **shape)).save_pretrained(folder)
    return folder


def synthetic_chains(path: Path, questions: int, negatives: int, seed: int = 0) -> Path:
    """Chains of 2-4 hops whose texts have real lengths (questions of about 16 words, triples of 2-4
    words a part), every text distinct, so no two examples of a batch share a triple."""
    rng = np.random.default_rng(seed)
    counter = iter(range(10**9))

    def words(low: int, high: int) -> str:
        return " ".join(f"w{int(rng.integers(30000))}" for _ in range(int(rng.integers(low, high + 1))))

    def triple() -> Triple:
        return Triple.make(words(2, 4), words(1, 3), words(2, 4), f"p{next(counter)}")

    records = []
    for q in range(questions):
        chain = tuple(triple() for _ in range(int(rng.integers(2, 5))))
        hops = tuple(tuple(triple() for _ in range(negatives)) for _ in chain)
        records.append(ChainRecord(f"q{q}", words(12, 20) + "?", "bridge", True, True, chain, hops))
    write_chains(path, records)
    return path


def fit(folder: Path, encoder: Path, chains: Path, args: argparse.Namespace, mini_batch: int | None) -> dict:
    """`train.py fit` on the recipe, overridden on the command line; its step times, peak memory and error."""
    timer = folder / "steps.json"
    overrides = {
        "--model.encoder.name": encoder, "--data.chains": chains, "--data.batch_size": args.batch_size,
        "--model.cache_mini_batch": "null" if mini_batch is None else mini_batch,
        "--trainer.devices": 1, "--trainer.strategy": "auto", "--trainer.accumulate_grad_batches": 1,
        "--trainer.max_steps": args.steps, "--trainer.limit_val_batches": 0, "--trainer.logger": "false",
        "--trainer.enable_progress_bar": "false", "--trainer.default_root_dir": folder,
        "--trainer.callbacks+=benchmarks.gpu_check.StepTimer": None, "--trainer.callbacks.output": timer,
    }
    if args.tiny:
        overrides |= {"--trainer.accelerator": "cpu", "--trainer.precision": "32-true", "--data.num_workers": 0}
    command = [sys.executable, str(ROOT / "train.py"), "fit", "--config", str(RECIPE)]
    for flag, value in overrides.items():
        command += [flag] if value is None else [flag, str(value)]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    result = json.loads(timer.read_text()) if timer.exists() else {"step_seconds": [], "peak_mib": None}
    steps = result["step_seconds"][2:]  # the first two warm up (allocator, kernels' autotuning)
    row = {"loss": "plain" if mini_batch is None else f"cached, {mini_batch} texts a pass",
           "questions a step": args.batch_size, "steps timed": len(steps),
           "s/step (median)": float(np.median(steps)) if steps else None,
           "questions/s": args.batch_size / float(np.median(steps)) if steps else None,
           "peak MiB": round(result["peak_mib"]) if result["peak_mib"] else None,
           "wall s": round(time.perf_counter() - start, 1)}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        row["error"] = "out of memory" if "out of memory" in done.stderr.lower() else last[:200]
    return row


def faiss_search(vectors: int, dim: int, queries: int, k: int = 10) -> list[dict]:
    """Seconds of an exact inner-product search (faiss IndexFlatIP) on the CPU and, if faiss has GPU support, on the GPU."""
    try:
        import faiss
    except ImportError:
        return [{"where": "faiss", "error": "not installed"}]
    rng = np.random.default_rng(0)
    base = rng.standard_normal((vectors, dim), dtype=np.float32)
    query = rng.standard_normal((queries, dim), dtype=np.float32)
    cpu = faiss.IndexFlatIP(dim)
    cpu.add(base)
    indexes = [("cpu", cpu)]
    gpus = faiss.get_num_gpus() if hasattr(faiss, "StandardGpuResources") else 0
    if gpus:
        resources = faiss.StandardGpuResources()
        indexes.append(("gpu", faiss.index_cpu_to_gpu(resources, 0, cpu)))
    rows, cpu_top1 = [], None
    for where, index in indexes:
        index.search(query[:8], k)  # warm up
        start = time.perf_counter()
        _, ids = index.search(query, k)
        seconds = time.perf_counter() - start
        cpu_top1 = ids[:, 0] if cpu_top1 is None else cpu_top1
        rows.append({"where": where, "vectors": vectors, "dim": dim, "queries": queries, "s": seconds,
                     "queries/s": queries / seconds, "top-1 agrees with cpu": float(np.mean(ids[:, 0] == cpu_top1))})
    if not gpus:
        rows.append({"where": "gpu", "error": "faiss has no GPU support here (faiss-gpu not installed) or sees no GPU"})
    return rows


def main(args: argparse.Namespace) -> None:
    if missing := [m for m in NEEDED if importlib.util.find_spec(m) is None]:
        sys.exit(f"missing Python modules: {', '.join(missing)} (carry them as wheels: see this script's docstring)")
    if not args.tiny and not torch.cuda.is_available():
        sys.exit("no GPU visible: run with --tiny to check the path on the CPU")
    env = {"machine": machine(), "torch": torch.__version__, "cuda": torch.version.cuda,
           "bf16": torch.cuda.is_available() and torch.cuda.is_bf16_supported()}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        encoder = encoder_folder(tmp / "encoder", TINY if args.tiny else E5_LARGE)
        chains = synthetic_chains(tmp / "chains.jsonl", args.batch_size * args.steps, negatives=10)
        rows = [fit(tmp / name, encoder, chains, args, mini_batch)
                for name, mini_batch in (("cached", args.mini_batch), ("plain", None))]
    search = faiss_search(*(20_000, 64, 100) if args.tiny else (1_000_000, 1024, 10_000))
    flat = {f"env.{k}": v for k, v in env.items()}
    flat |= {f"train.{r['loss'].split(',')[0]}.{k}": v for r in rows for k, v in r.items() if k != "loss"}
    flat |= {f"faiss.{r['where']}.{k}": v for r in search for k, v in r.items() if k != "where"}
    shape = "a 2-layer BERT (--tiny)" if args.tiny else "E5-large-v2's shape (24 layers, 1024 wide; random weights)"
    markdown = (
        f"# The CUDA path: the paper recipe and faiss\n\nMachine: {env['machine']}; torch {env['torch']}, CUDA "
        f"{env['cuda']}, bf16 {env['bf16']}.\n\n## Training steps\n\n`train.py fit --config {RECIPE.relative_to(ROOT)}` "
        f"with command-line overrides only (one device, {args.batch_size} questions a step, no validation), on an "
        f"encoder of {shape} and synthetic chains of real text lengths with 10 negatives a hop; "
        f"{'float32 on the CPU' if args.tiny else 'bf16-mixed'}. Median seconds of an optimizer step after two "
        f"warm-up steps; peak: torch's allocated GPU memory.\n\n"
        + markdown_table(rows, ["loss", "questions a step", "steps timed", "s/step (median)", "questions/s",
                                "peak MiB", "wall s", "error"])
        + "\n## Exact search (faiss IndexFlatIP, top 10)\n\n"
        + markdown_table(search, ["where", "vectors", "dim", "queries", "s", "queries/s", "top-1 agrees with cpu",
                                  "error"]))
    write_results(args.output_name, markdown, flat)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tiny", action="store_true", help="a 2-layer encoder on the CPU: checks the path")
    parser.add_argument("--batch_size", type=int, default=512, help="questions a step")
    parser.add_argument("--mini_batch", type=int, default=64, help="texts a forward pass of the cached loss")
    parser.add_argument("--steps", type=int, default=12, help="optimizer steps a run (the first two are not timed)")
    parser.add_argument("--output_name", default="gpu_check", help="results name under benchmarks/results/")
    main(parser.parse_args())
