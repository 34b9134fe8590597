"""Single-shot retrieval baselines (BM25, dense MiniLM) on the shared benchmark slices.

    python -m benchmarks.retrieval_baselines [--limit N]

For each dataset: recall@2/5/10 of both retrievers, index build throughput (passages/s) and
query throughput (queries/s), measured side by side in this process, with dense throughput also
given as a ratio to BM25's. Indexes are built from scratch (a temporary cache) so that build time
is real. On the 2Wiki slice, the `evidence` titles shipped with the gold file (another system's
retrieval: a vector-DB baseline) are scored as a peer row; it lists 8 titles, so its @10 is @8.
"""

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from benchmarks.common import RESULTS, ROOT, SHARED_DATA, machine, parse_args, write_results
from core.text import normalize_space
from datamodules.loaders import load_benchmark
from evaluation.report import markdown_table
from evaluation.scores import scored_run, write_scores
from inference.methods import Prediction, SingleShotRAG
from inference.retrievers import make_retriever
from models.encoder import Encoder, EncoderConfig

SPLIT = (  # which questions the figures stand on
    'Split: every question of each slice, test questions included; these figures choose nothing (the '
    'retrievers are untuned).')

DATASETS = {
    "hotpotqa-ircot-dev-500": ("ircot", "hotpotqa/ircot_dev_500.jsonl", None, None),
    "musique-kag-100": ("musique", "musique/kag_100.json", None, None),
    "musique-hipporag-train-100": ("musique", "musique/hipporag_train_100.json",
                                   "musique/hipporag_train_100_corpus.json", None),
    "2wiki-fastgraphrag-76": ("plain", "2wiki/fastgraphrag_101_questions.json", "2wiki/hipporag_corpus_6119.json",
                              "2wiki/fastgraphrag_101_gold_titles.json"),
}
KS = (2, 5, 10)
SCORES = RESULTS / "retrieval_baselines"


def peer_predictions(benchmark, gold_titles_file: Path) -> list[Prediction]:
    """The 2Wiki file's `evidence` titles, mapped to corpus passages (titles are unique there)."""
    by_title = {p.title: p.id for p in benchmark.passages}
    evidence = {normalize_space(r["question"]): r["evidence"] for r in json.loads(gold_titles_file.read_text())}
    return [Prediction(q.id, [(by_title[t], 0.0) for t in map(normalize_space, evidence[normalize_space(q.question)])
                                    if t in by_title]) for q in benchmark.questions]


def run(limit: int | None) -> None:
    shutil.rmtree(SCORES, ignore_errors=True)
    encoder = Encoder(EncoderConfig("minilm", max_length=256))
    rows, flat = [], {"machine": machine(), "encoder": "all-MiniLM-L6-v2 (packaged), mean pooling, 256 tokens"}
    for name, (fmt, questions, corpus, gold) in DATASETS.items():
        path = lambda p: str(SHARED_DATA / p) if p else None  # noqa: E731
        bench = load_benchmark(fmt, path(questions), path(corpus), path(gold), limit)
        (SCORES / name).mkdir(parents=True)
        queries = [q.question for q in bench.questions]
        timings = {}
        for kind in ("bm25", "dense"):
            retriever = make_retriever(kind, encoder=encoder if kind == "dense" else None)
            with tempfile.TemporaryDirectory() as cache:
                start = time.perf_counter()
                retriever.build(bench.passages, cache_dir=cache)
                build = time.perf_counter() - start
            method = SingleShotRAG(retriever, k=max(KS))
            start = time.perf_counter()
            predictions = method.predict(bench.questions)
            query = time.perf_counter() - start
            timings[kind] = (len(bench.passages) / build, len(queries) / query)
            scored = scored_run(kind, bench, predictions)
            write_scores(scored, SCORES / name / f"{kind}.jsonl.gz")
            metrics = scored.summary()
            row = {"dataset": name, "method": kind, "questions": len(queries), "passages": len(bench.passages),
                   **{f"recall@{k}": metrics[f"recall@{k}"] for k in KS},
                   "build passages/s": timings[kind][0], "queries/s": timings[kind][1]}
            if kind == "dense":
                row["build vs bm25"] = timings["dense"][0] / timings["bm25"][0]
                row["query vs bm25"] = timings["dense"][1] / timings["bm25"][1]
            rows.append(row)
        if gold:  # the peer's published retrieval
            peer = scored_run("peer", bench, peer_predictions(bench, SHARED_DATA / gold))
            write_scores(peer, SCORES / name / "peer.jsonl.gz")
            metrics = peer.summary()
            rows.append({"dataset": name, "method": "peer: vector-DB (file's evidence, 8 titles)",
                         "questions": len(queries), "passages": len(bench.passages),
                         **{f"recall@{k}": metrics[f"recall@{k}"] for k in KS}})
    for row in rows:
        key = f"{row['dataset']}.{row['method'].split(':')[0]}"
        flat.update({f"{key}.{k}": v for k, v in row.items() if k not in ("dataset", "method")})
    columns = ["dataset", "method", "questions", "passages"] + [f"recall@{k}" for k in KS]
    columns += ["build passages/s", "queries/s", "build vs bm25", "query vs bm25"]
    markdown = (f"# Single-shot retrieval baselines\n\n{SPLIT}\n\nMachine: {flat['machine']}. Encoder: {flat['encoder']}.\n"
                f"Recall in %; throughput from one build and one batched query pass each, side by side.\n\n"
                + markdown_table(rows, columns)
                + f"\nPer-question scores: `{SCORES.relative_to(ROOT)}/<dataset>/<method>.jsonl.gz`.\n")
    write_results("retrieval_baselines", markdown, flat)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions of each dataset")
    run(parse_args(parser).limit)
