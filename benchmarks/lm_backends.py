"""LM backends side by side: transformers (float32, the dequantised GGUF) against llama.cpp (the q4 GGUF
as it is), on the same inputs, on this machine.

    python -m benchmarks.lm_backends [--passages 30] [--questions 20] [--mind_questions 3]

Inputs (MuSiQue hipporag_train_100, the project's packaged Qwen2.5-Coder-0.5B-Instruct):
- extraction: the gold passages of the first questions (`--passages`), 2 demonstrations, at most
  256 new tokens, ending at the first repeated line; transformers at batch 8 (its fastest setting
  in benchmarks/results/triple_extraction.md), llama.cpp with 8 sequences decoded together (the
  default, used for the equivalence figures) and one at a time, on every core;
- the reader: the first `--questions` questions, answered from their gold passages;
- the Constructor: the same questions at the first step, with the first 20 gpt-3.5 triples of their
  gold passages as candidates;
- MIND: the first `--mind_questions` questions, fixed-interval retrieval (a retrieval at every
  sentence, so both backends do the same work) with BM25 over the corpus, every sentence's signals
  computed (as calibration traces record them).

Each backend runs in its own process, one after the other, so that peak memory is its own; each
part's outputs and timings are saved under runs/bench/lm_backends/ as they finish, and a rerun
resumes. Equivalence: the share of identical triples, each backend's precision and recall against
gpt-3.5's triples, the reader's EM/F1 and identical answers, the Constructor's identical choices.
The limit of decoding: the model bytes read per generated token against the machine's measured
memory bandwidth.
"""

import argparse
import json
import multiprocessing
import resource
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks.common import ROOT, SHARED_DATA, machine, parse_args, write_results
from core.text import answer_scores
from core.types import Triple
from datamodules.loaders import DataConfig
from evaluation.report import markdown_table
from inference.constructor import Constructor
from inference.mind import MindRAG, MindSettings, PassageSearch
from inference.reader import Reader, ReaderSettings
from inference.retrievers import BM25Retriever
from kg.extraction import TripleExtractor
from kg.openie_import import import_openie
from kg.quality import identical_share, precision_recall
from kg.store import KGStore
from models.encoder import Encoder
from models.lm.config import LMConfig
from models.packaged import packaged_qwen_gguf, packaged_qwen_path

SPLIT = (  # which questions the figures stand on
    'Split: MuSiQue hipporag_train_100 passages and questions; the backends are compared on speed and on '
    'agreement with each other, and the CPU default (llama.cpp) was chosen for speed, not on these '
    "answers' scores.")

RUNS = ROOT / "runs" / "bench" / "lm_backends"
DATA = DataConfig("musique", str(SHARED_DATA / "musique" / "hipporag_train_100.json"),
                  str(SHARED_DATA / "musique" / "hipporag_train_100_corpus.json"))
OPENIE = SHARED_DATA / "musique" / "hipporag_train_100_openie_gpt35.json"
BACKENDS = {"transformers": (8,), "llama_cpp": (8, 1)}  # backend -> extraction batch sizes, the first one compared


def gold_passages(benchmark, n: int) -> list:
    by_id, chosen = benchmark.passage_by_id(), []
    for q in benchmark.questions:
        if len(chosen) + len(q.gold_passage_ids) > n:
            break
        chosen += [by_id[pid] for pid in q.gold_passage_ids if by_id[pid] not in chosen]
    return chosen


def reference_triples(benchmark) -> KGStore:
    store = KGStore(RUNS / "gpt35")
    if not len(store):
        import_openie(OPENIE, benchmark.passages, store)
    return store


def timed(part: str, folder: Path, run) -> dict:
    """Run one part once and save its outputs and seconds; a saved part is read back instead."""
    path = folder / f"{part}.json"
    if path.exists():
        return json.loads(path.read_text())
    start = time.perf_counter()
    result = run()
    result["seconds"] = time.perf_counter() - start
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1))
    return result


def measure(backend: str, args: argparse.Namespace) -> dict:
    """Every part with one backend (run in a process of its own)."""
    torch.set_num_threads(args.threads or torch.get_num_threads())
    benchmark = DATA.load()
    questions = benchmark.questions[: args.questions]
    by_id = benchmark.passage_by_id()
    start = time.perf_counter()
    lm = LMConfig(backend=backend).build()
    first = lm.chat([[{"role": "user", "content": "Name the capital of France in one word."}]], max_new_tokens=8)[0]
    results = {"load_and_first_output_seconds": time.perf_counter() - start, "first_output": first.text}

    def extract(batch_size: int) -> dict:
        passages = gold_passages(benchmark, args.passages)
        extractor = TripleExtractor(lm, Encoder("minilm"), num_demos=2, batch_size=batch_size, max_new_tokens=256)
        out = extractor.extract(passages)
        return {"passages": [p.id for p in passages], "batch_size": batch_size,
                "triples": {pid: [[t.head, t.relation, t.tail] for t in triples] for pid, (triples, _) in out.items()}}

    def read() -> dict:
        answers, _ = Reader(lm, ReaderSettings(top_k=4)).answer(questions, [[by_id[pid] for pid in q.gold_passage_ids] for q in questions])
        return {"answers": answers}

    def construct() -> dict:
        gpt35 = reference_triples(benchmark)
        items = [(q.question, [], [t for pid in q.gold_passage_ids for t in gpt35.get(pid)][:20]) for q in questions]
        made = Constructor(lm)(items)
        return {"outputs": [m.output for m in made], "choices": [m.triple.text if m.triple else None for m in made]}

    def mind() -> dict:
        retriever = BM25Retriever()
        retriever.build(benchmark.passages)
        method = MindRAG(lm, PassageSearch(retriever, by_id), trigger="always",
                         settings=MindSettings(entity_filter="none"), record_signals=True)
        predictions = method.predict(benchmark.questions[: args.mind_questions])
        return {"answers": [p.answer for p in predictions], "llm_calls": [p.llm_calls for p in predictions]}

    first_batch, *other_batches = BACKENDS[backend]
    parts = [("extraction", lambda: extract(first_batch)), ("reader", read), ("constructor", construct), ("mind", mind)]
    parts += [(f"extraction_batch{b}", lambda b=b: extract(b)) for b in other_batches]
    for part, run in parts:
        results[part] = timed(part, RUNS / f"p{args.passages}-q{args.questions}-m{args.mind_questions}" / backend, run)
        print(f"{backend} {part}: {results[part]['seconds']:.0f} s", flush=True)
    results["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return results


def bandwidth_gb_s() -> float:
    """Memory bandwidth of a large copy (read + write), the bound of decoding a model token by token."""
    a = np.ones(2**28 // 8)  # 256 MiB
    b = np.empty_like(a)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - start)
    return 2 * a.nbytes / best / 1e9


def as_triples(rows: dict) -> dict:
    return {pid: [Triple.make(h, r, t, pid) for h, r, t in triples] for pid, triples in rows.items()}


def main(args: argparse.Namespace) -> None:
    context = multiprocessing.get_context("spawn")
    results = {}
    for backend in BACKENDS:
        with context.Pool(1) as pool:
            results[backend] = pool.apply(measure, (backend, args))
    benchmark = DATA.load()
    questions = benchmark.questions[: args.questions]
    reference = reference_triples(benchmark)
    t, c = results["transformers"], results["llama_cpp"]
    ids = t["extraction"]["passages"]
    triples = {b: as_triples(r["extraction"]["triples"]) for b, r in results.items()}
    gpt35 = {pid: reference.get(pid) for pid in ids}

    rows, flat = [], {}
    for backend, r in results.items():
        precision, recall = precision_recall(triples[backend], gpt35, ids)
        answers = [answer_scores(a, q.answers) for a, q in zip(r["reader"]["answers"], questions)]
        row = {"backend": backend,
               "extraction passages/s": len(ids) / r["extraction"]["seconds"],
               "triples": sum(len(v) for v in triples[backend].values()),
               "precision vs gpt-3.5": precision, "recall vs gpt-3.5": recall,
               "reader s/question": r["reader"]["seconds"] / len(questions),
               "reader EM": float(np.mean([a["em"] for a in answers])), "reader F1": float(np.mean([a["f1"] for a in answers])),
               "Constructor s/question": r["constructor"]["seconds"] / len(questions),
               "MIND s/question": r["mind"]["seconds"] / args.mind_questions,
               "load + first output s": r["load_and_first_output_seconds"], "peak RSS GB": r["peak_rss_gb"]}
        rows.append(row)
        flat.update({f"{backend}.{k}": v for k, v in row.items() if k != "backend"})
    speedup = {"extraction": t["extraction"]["seconds"] / c["extraction"]["seconds"],
               "reader": t["reader"]["seconds"] / c["reader"]["seconds"],
               "constructor": t["constructor"]["seconds"] / c["constructor"]["seconds"],
               "mind": t["mind"]["seconds"] / c["mind"]["seconds"]}
    same = {"identical triples": identical_share(triples["transformers"], triples["llama_cpp"], ids),
            "identical reader answers": float(np.mean([a == b for a, b in zip(t["reader"]["answers"], c["reader"]["answers"])])),
            "identical Constructor choices": float(np.mean([a == b for a, b in zip(t["constructor"]["choices"],
                                                                                     c["constructor"]["choices"])]))}
    flat.update({f"speedup.{k}": v for k, v in speedup.items()} | {f"equivalence.{k}": v for k, v in same.items()})
    by_batch = [{"backend": backend, "batch": r[part]["batch_size"], "passages/s": len(ids) / r[part]["seconds"],
                 "vs transformers batch 8": t["extraction"]["seconds"] / r[part]["seconds"]}
                for backend, r in results.items() for part in sorted(k for k in r if k.startswith("extraction"))]
    flat.update({f"{row['backend']}.extraction_batch{row['batch']}.{k}": row[k]
                 for row in by_batch for k in ("passages/s", "vs transformers batch 8")})
    bandwidth = bandwidth_gb_s()
    model_bytes = {"llama_cpp": packaged_qwen_gguf().stat().st_size,
                   "transformers": sum(p.stat().st_size for p in packaged_qwen_path().glob("*.safetensors"))}
    limits = {b: bandwidth * 1e9 / n for b, n in model_bytes.items()}
    flat.update({"memory_bandwidth_gb_s": bandwidth, **{f"{b}.model_gb": n / 1e9 for b, n in model_bytes.items()},
                 **{f"{b}.decode_bound_tokens_s": v for b, v in limits.items()}})
    setup = (f"MuSiQue hipporag_train_100: {len(ids)} gold passages, {len(questions)} questions (reader and Constructor), "
             f"{args.mind_questions} for MIND; packaged Qwen2.5-Coder-0.5B-Instruct, greedy. Machine: {machine()}.")
    markdown = (f"# LM backends\n\n{SPLIT}\n\n{setup}\n\n" + markdown_table(rows, list(rows[0]))
                + "\n## Extraction throughput by batch size\n\n" + markdown_table(by_batch, list(by_batch[0]))
                + "\n## llama.cpp against transformers\n\n"
                + markdown_table([{**{f"{k} speedup": v for k, v in speedup.items()}, **same}],
                                 [f"{k} speedup" for k in speedup] + list(same))
                + f"\n## The limit of decoding\n\nMemory bandwidth (a 256 MiB copy, best of 5): {bandwidth:.1f} GB/s. "
                + "Decoding reads every weight once per generated token (the output layer shares the embedding matrix), "
                + "so one sequence cannot go faster than bandwidth / model bytes: "
                + ", ".join(f"{b} {model_bytes[b] / 1e9:.2f} GB, at most {limits[b]:.0f} tokens/s" for b in model_bytes)
                + ".\n")
    write_results("lm_backends", markdown, {"setup": setup, **flat})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=int, default=30)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--mind_questions", type=int, default=3)
    main(parse_args(parser))
