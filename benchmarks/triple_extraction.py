"""Triple extraction with the packaged LM: speed by batch size, and quality against gpt-3.5's triples.

    python -m benchmarks.triple_extraction [--passages 16] [--batch_sizes 1 4 8 16] [--threads 1]

The sample is fixed: the gold passages of the first MuSiQue train-100 questions (hop order), up to
`--passages`. Each batch size extracts the same sample into a fresh store; passages/s and
triples/s are given with their ratio to batch 1 (side by side, one process). Quality uses the
batch-1 output against the gpt-3.5 triples HippoRAG published for the same passages:
- coverage: the share of gold answers and bridge entities (the sub-answers of
  `question_decomposition`) found in the head or tail of some triple of the passage that supports
  that hop, for our triples and for gpt-3.5's;
- precision and recall of our triples against gpt-3.5's, a pair matching when the token F1 of
  "head relation tail" is at least 0.5 (each reference triple matched at most once).
"""

import argparse
import tempfile
import time
from pathlib import Path

from benchmarks.common import SHARED_DATA, machine, parse_args, write_results
from datamodules.loaders import load_benchmark
from evaluation.report import markdown_table
from kg.extraction import TripleExtractor
from kg.openie_import import import_openie
from kg.quality import precision_recall
from kg.store import KGStore
from models.encoder import Encoder
from models.lm.transformers_backend import CausalLM
from training_data.silver_chains import contains_answer

SPLIT = (  # which questions the figures stand on
    'Split: passages, not questions: the gold passages of the first MuSiQue hipporag_train_100 questions,'
    " measured against gpt-3.5's triples; no question is answered here.")

MUSIQUE = "musique/hipporag_train_100.json"
CORPUS = "musique/hipporag_train_100_corpus.json"
OPENIE = "musique/hipporag_train_100_openie_gpt35.json"


def sample(bench, n: int):
    """Gold passages of the first questions, with (passage id, sub-answer) pairs for each hop."""
    by_id, chosen, hops = bench.passage_by_id(), [], []
    for q in bench.questions:
        if len(chosen) + len(q.gold_passage_ids) > n:
            break
        chosen += [by_id[pid] for pid in q.gold_passage_ids if by_id[pid] not in chosen]
        if len(q.decomposition) == len(q.gold_passage_ids):
            hops += [(pid, step["answer"]) for pid, step in zip(q.gold_passage_ids, q.decomposition)]
    return chosen, hops


def coverage(store: KGStore, hops) -> float:
    return sum(any(contains_answer(t, [answer]) for t in store.get(pid)) for pid, answer in hops) / len(hops)


def run(n_passages: int, batch_sizes: list[int], num_demos: int, max_new_tokens: int) -> None:
    bench = load_benchmark("musique", str(SHARED_DATA / MUSIQUE), str(SHARED_DATA / CORPUS))
    passages, hops = sample(bench, n_passages)
    lm, encoder = CausalLM("qwen2.5-coder-0.5b-instruct"), Encoder("minilm")
    rows, stores = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        reference = KGStore(Path(tmp) / "gpt35")
        import_openie(SHARED_DATA / OPENIE, bench.passages, reference)
        for batch_size in batch_sizes:
            extractor = TripleExtractor(lm, encoder, num_demos=num_demos, batch_size=batch_size,
                                        max_new_tokens=max_new_tokens)
            store = stores[batch_size] = KGStore(Path(tmp) / f"batch{batch_size}")
            start = time.perf_counter()
            summary = extractor.extract_into(store, passages)
            seconds = time.perf_counter() - start
            rows.append({"batch size": batch_size, "passages": len(passages), "seconds": seconds,
                         "passages/s": len(passages) / seconds, "triples/s": summary["triples"] / seconds,
                         "triples": summary["triples"], "rejected": summary["rejected"]})
            rows[-1]["speed vs batch 1"] = rows[-1]["passages/s"] / rows[0]["passages/s"]
        ours = stores[batch_sizes[0]]
        ids = [p.id for p in passages]
        precision, recall = precision_recall({i: ours.get(i) for i in ids}, {i: reference.get(i) for i in ids}, ids)
        quality = {"hops": len(hops), "coverage ours": coverage(ours, hops),
                   "coverage gpt-3.5": coverage(reference, hops), "precision vs gpt-3.5": precision,
                   "recall vs gpt-3.5": recall, "triples ours": sum(len(ours.get(i)) for i in ids),
                   "triples gpt-3.5": sum(len(reference.get(i)) for i in ids)}
    setup = (f"Packaged Qwen2.5-Coder-0.5B-Instruct (float32, greedy), {num_demos} demonstrations per passage, "
             f"at most {max_new_tokens} new tokens, a row ending at its first repeated line. Machine: {machine()}.")
    markdown = (f"# Triple extraction\n\n{SPLIT}\n\n{setup}\nSample: the gold passages of the first MuSiQue train-100 "
                f"questions ({len(passages)} passages).\n\n## Speed\n\n"
                + markdown_table(rows, list(rows[0]))
                + "\n## Quality (batch-1 output) against gpt-3.5's triples of the same passages\n\n"
                + markdown_table([quality], list(quality)))
    flat = {"setup": setup, **{f"batch{r['batch size']}.{k}": v for r in rows for k, v in r.items()},
            **{f"quality.{k}": v for k, v in quality.items()}}
    write_results("triple_extraction", markdown, flat)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=int, default=16)
    parser.add_argument("--batch_sizes", type=int, nargs="+", default=[1, 4, 8, 16])
    parser.add_argument("--num_demos", type=int, default=2)
    parser.add_argument("--max_new_tokens", type=int, default=256)
    args = parse_args(parser)
    run(args.passages, args.batch_sizes, args.num_demos, args.max_new_tokens)
