"""Triple extraction in corpus order against grouped by demonstrations, with llama.cpp, side by side.

    python -m benchmarks.extraction_order [--questions 20] [--kg_config configs/kg/hotpotqa_ircot_dev_100.yaml]

`TripleExtractor.extract_into` sorts the passages it extracts by their chosen demonstrations, so
prompts that begin alike (instruction, then the same demonstrations) follow each other and
llama.cpp's slots decode that shared prefix once per group. This measures what it gains on a real
corpus: the contexts of the first `--questions` questions of a KG config's corpus (by default
HotpotQA ircot_dev_500, the corpus of kirag_eval's `hotpotqa_ircot` part), extracted twice into
fresh stores with the config's settings (LM on llama.cpp, demonstrations, batch, new tokens), once
in corpus order and once grouped, in the order `--first` says. Per order: passages/s, prompt tokens
llama.cpp had to decode per passage (its counter: those no slot's cache held) and generated tokens
per passage; and the share of passages whose triples came out identical in both orders (greedy
decoding, but the batch a prompt runs in, and the cache it starts from, may change the last bits of
its logits).

The grouped order's triples are what `prepare.py kg` with that config would extract, so they are
then added to the config's KG store (the passages it lacks), and the next `prepare.py kg` run
extracts only the rest (and archives them all).

The gain grows with the corpus: a larger corpus has larger groups. So the prompt tokens left to
decode per passage in both orders are also computed, without running the LM, for the contexts of
the first `--simulate_questions` (100) questions, 8 slots simulated as the backend fills them. At
the defaults it took 92 minutes on 2 cores (2026-12-02); not resumable.
"""

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import yaml
from tqdm.auto import tqdm

from benchmarks.common import ROOT, machine, parse_args, write_results
from core.config import dataclass_from
from evaluation.report import markdown_table
from kg.build import KGConfig
from kg.extraction import TripleExtractor, batched
from kg.store import KGStore
from models.encoder import Encoder
from models.lm.interface import Slots

SPLIT = (  # which questions the figures stand on
    "Split: the contexts of ircot_dev_500's first 20 questions, test questions of kirag_eval and "
    'mind_eval; only the speed of two orders of the same extraction and their agreement are measured, so '
    'nothing that changes a test figure is chosen on them.')

KG_CONFIG = ROOT / "configs" / "kg" / "hotpotqa_ircot_dev_100.yaml"


def batches(extractor: TripleExtractor, passages, grouped: bool) -> list[list]:
    """The extractor's batches of (passage, demonstrations): grouped, as `extract_into` takes them, or in
    corpus order."""
    if grouped:
        return extractor._batches(passages)
    return batched(list(zip(passages, extractor._chosen(passages))), extractor.batch_size)


def simulated_prompt_tokens(llama, extractor: TripleExtractor, passages, grouped: bool) -> float:
    """Prompt tokens a passage leaves to decode when llama.cpp's slots keep what they last held:
    each prompt of a batch (sorted, as the backend takes them) starts from the longest prefix any
    slot holds, in the slot the backend's `Slots` policy gives it."""
    slots, total = Slots(llama.parallel), 0
    for batch in batches(extractor, passages, grouped):
        prompts = sorted(llama.format_chat(extractor._prompt(p, chosen)) for p, chosen in batch)
        free = list(range(llama.parallel))
        for ids in (llama.encode(p) for p in prompts):
            slot = slots.choose(free, ids)
            free.remove(slot)
            total += len(ids) - slots.reused(ids)[1]
            slots.hold(slot, ids)
    return total / len(passages)


class CountingLM:
    """The LM, counting the tokens it generates."""

    def __init__(self, lm) -> None:
        self.lm, self.generated = lm, 0

    def chat(self, conversations, **kwargs):
        outputs = self.lm.chat(conversations, **kwargs)
        self.generated += sum(o.new_tokens for o in outputs)
        return outputs


def extract(extractor: TripleExtractor, llama, passages, grouped: bool, folder: Path) -> tuple[dict, KGStore]:
    """Extract `passages` into a fresh store in one order, batch by batch as `extract_into` does, timed
    (choosing the demonstrations included)."""
    store = KGStore(folder)
    llama.forget()  # nothing cached: the other order's prompts would be reused
    before, generated = llama.prompt_tokens_decoded, extractor.lm.generated
    start = time.perf_counter()
    with tqdm(total=len(passages), desc="grouped" if grouped else "corpus order", unit="passage") as bar:
        for batch in batches(extractor, passages, grouped):
            store.add_many((pid, t, r) for pid, (t, r) in extractor._extract_batch(batch).items())
            bar.update(len(batch))
    seconds = time.perf_counter() - start
    return {"order": "grouped by demonstrations" if grouped else "corpus order", "passages": len(passages),
            "seconds": seconds, "passages/s": len(passages) / seconds,
            "prompt tokens decoded per passage": (llama.prompt_tokens_decoded - before) / len(passages),
            "generated tokens per passage": (extractor.lm.generated - generated) / len(passages)}, store


def rooted(path: str | None) -> str | None:
    """A config's relative path, taken from the project root as `prepare.py` run there takes it."""
    return None if path is None or Path(path).is_absolute() else str(ROOT / path)


def load_kg_config(path: Path) -> KGConfig:
    config = dataclass_from(KGConfig, yaml.safe_load(path.read_text()))
    if config.openie or config.lm.resolved_backend() != "llama_cpp":
        sys.exit(f"{path}: the benchmark needs an extraction on llama.cpp (its counter of decoded prompt tokens)")
    data = dataclasses.replace(config.data, questions=rooted(config.data.questions), corpus=rooted(config.data.corpus))
    return dataclasses.replace(config, data=data, store=rooted(config.store))


def main(args: argparse.Namespace) -> None:
    config = load_kg_config(args.kg_config)
    passages = dataclasses.replace(config.data, limit=args.questions).load().passages
    whole = dataclasses.replace(config.data, limit=args.simulate_questions).load().passages
    lm = config.lm.build()
    llama = lm.generator
    extractor = TripleExtractor(CountingLM(lm), Encoder(config.encoder), num_demos=config.num_demos,
                                batch_size=config.batch_size, max_new_tokens=config.max_new_tokens)
    simulated = {"grouped" if g else "corpus order": simulated_prompt_tokens(llama, extractor, whole, g)
                 for g in (False, True)}
    rows, stores = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for grouped in ([True, False] if args.first == "grouped" else [False, True]):
            row, stores[grouped] = extract(extractor, llama, passages, grouped, Path(tmp) / str(grouped))
            rows.append(row)
        identical = sum([t.text for t in stores[True].get(p.id)] == [t.text for t in stores[False].get(p.id)]
                        for p in passages) / len(passages)
        kept = KGStore(config.store).add_many(
            (p.id, stores[True].get(p.id), stores[True].rejected(p.id)) for p in passages)
    print(f"added the grouped order's triples of {kept} passages to {config.store} "
          f"(`prepare.py kg --config {args.kg_config}` extracts the rest)")
    by_order = {r["order"]: r for r in rows}
    ratio = by_order["grouped by demonstrations"]["passages/s"] / by_order["corpus order"]["passages/s"]
    summary = {"speed grouped / corpus order": ratio, "identical triples (share of passages)": identical,
               f"simulated prompt tokens per passage, {len(whole)} passages, corpus order": simulated["corpus order"],
               f"simulated prompt tokens per passage, {len(whole)} passages, grouped": simulated["grouped"]}
    setup = (f"The contexts of the first {args.questions} questions ({len(passages)} passages) of "
             f"{Path(config.data.questions).name}, extracted with the settings of {args.kg_config.name}: "
             f"{config.lm.name} on llama.cpp ({llama.parallel} slots), batch {config.batch_size}, "
             f"{config.num_demos} demonstrations chosen by {config.encoder}, at most {config.max_new_tokens} new "
             f"tokens; {args.first} ran first. Machine: {machine()}.")
    markdown = ("# Triple extraction: corpus order against grouped by demonstrations\n\n" + SPLIT + "\n\n" + setup + "\n\n"
                + markdown_table(rows, list(rows[0])) + "\n" + markdown_table([summary], list(summary)))
    flat = {"setup": setup, **{f"{r['order']}.{k}": v for r in rows for k, v in r.items() if k != "order"},
            **summary}
    write_results("extraction_order", markdown, flat)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kg_config", type=Path, default=KG_CONFIG,
                        help="the corpus and extraction settings, and the KG store that keeps the grouped triples")
    parser.add_argument("--questions", type=int, default=20, help="extract the contexts of the first N questions")
    parser.add_argument("--simulate_questions", type=int, default=100,
                        help="simulate the prompt tokens of the contexts of the first N questions")
    parser.add_argument("--first", choices=["grouped", "corpus"], default="corpus", help="the order that runs first")
    main(parse_args(parser))
