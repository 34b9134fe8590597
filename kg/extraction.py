"""KiRAG's offline triple extraction with a chat LM, into a resumable `KGStore`."""

from __future__ import annotations

import time
from collections.abc import Iterable

from tqdm.auto import tqdm

from core.types import Passage, Triple
from kg.prompt import Demo, DemoSelector, build_prompt, load_demos
from kg.store import KGStore
from kg.triple_parser import parse_triples
from models.encoder import Encoder, TextEncoder
from models.lm.chat import Message
from models.lm.interface import LanguageModel

Extracted = tuple[list[Triple], int]  # (triples, number of rejected `<...>` matches)

SECONDS_PER_PASSAGE = {"transformers": 14.5, "llama_cpp": 4.4}
"""Extraction time of one passage with the packaged 0.5B LM on a 2-core CPU, by backend, as measured in
benchmarks/results/lm_backends.md (30 MuSiQue passages, both at batch 8): the basis of the
estimate given before an extraction starts. Machines of the same size differ: llama.cpp took 14-17 s
a passage on another 2-core machine of this project (MuSiQue kag_100, 2026-12-01)."""


def extraction_notice(store: KGStore, passages: Iterable[Passage], backend: str) -> str | None:
    """What extracting the passages the store lacks will cost, to say before it starts (None: nothing to do)."""
    passages = _unique(passages)
    missing = store.missing(p.id for p in passages)
    if not missing:
        return None
    notice = f"KG store {store.folder}: {len(missing)} of {len(passages)} passages have no triples yet"
    if backend not in SECONDS_PER_PASSAGE:
        return f"{notice}; the LM ({backend}) extracts them"
    seconds = SECONDS_PER_PASSAGE[backend]
    return (f"{notice}; the LM ({backend}) extracts them at about {seconds:.0f} s a passage on a 2-core CPU "
            f"(about {len(missing) * seconds / 3600:.1f} h for all of them; up to 4x longer on slower machines)")


def _unique(passages: Iterable[Passage]) -> list[Passage]:
    """Each passage once, in order of first appearance."""
    first: dict[str, Passage] = {}
    for p in passages:
        first.setdefault(p.id, p)
    return list(first.values())


class TripleExtractor:
    """Extracts `<head; relation; tail>` triples from passages with a few-shot chat prompt.

    Decoding settings (greedy in the paper) belong to the LM. `encoder` chooses the
    demonstrations; it defaults to the packaged MiniLM, loaded only when `num_demos > 0`.
    """

    def __init__(
        self,
        lm: LanguageModel,
        encoder: TextEncoder | None = None,
        demos: list[Demo] | None = None,
        num_demos: int = 5,
        batch_size: int = 8,
        max_new_tokens: int = 512,
    ) -> None:
        self.lm = lm
        self.demos = load_demos() if demos is None else demos
        if not 0 <= num_demos <= len(self.demos):
            raise ValueError(f"num_demos must be between 0 and the pool size {len(self.demos)}, got {num_demos}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        if num_demos and encoder is None:
            encoder = Encoder("minilm")
        self.selector = DemoSelector(encoder, self.demos) if num_demos else None
        self.num_demos = num_demos
        self.batch_size = batch_size
        self.max_new_tokens = max_new_tokens

    def _chosen(self, passages: list[Passage], show_progress: bool = False) -> list[tuple[int, ...]]:
        """Each passage's demonstrations, as positions in the pool."""
        if self.selector is None:
            return [() for _ in passages]
        return self.selector.choose(passages, self.num_demos, show_progress)

    def prompts(self, passages: list[Passage]) -> list[list[Message]]:
        return [self._prompt(p, chosen) for p, chosen in zip(passages, self._chosen(passages), strict=True)]

    def _prompt(self, passage: Passage, chosen: tuple[int, ...]) -> list[Message]:
        return build_prompt(passage, [self.demos[i] for i in chosen])

    def _extract_batch(self, batch: list[tuple[Passage, tuple[int, ...]]]) -> dict[str, Extracted]:
        outputs = self.lm.chat([self._prompt(p, chosen) for p, chosen in batch], max_new_tokens=self.max_new_tokens,
                               batch_size=self.batch_size, stop_repeated_lines=True)
        result = {}
        for (passage, _), output in zip(batch, outputs, strict=True):
            parts, rejected = parse_triples(output.text)
            result[passage.id] = ([Triple.make(*t, passage.id, passage.sentences) for t in parts], rejected)
        return result

    def _batches(self, passages: list[Passage], show_progress: bool = False
                 ) -> list[list[tuple[Passage, tuple[int, ...]]]]:
        """Batches of (passage, its demonstrations), the passages grouped by their demonstrations: prompts
        that begin alike come one after another, so an LM that keeps the KV cache of a shared prompt
        prefix (llama.cpp) decodes the instruction and the demonstrations once per group, not once per
        passage (what it gains: benchmarks/results/extraction_order.md)."""
        chosen = self._chosen(passages, show_progress)
        order = sorted(range(len(passages)), key=chosen.__getitem__)  # stable: corpus order within a group
        return batched([(passages[i], chosen[i]) for i in order], self.batch_size)

    def extract(self, passages: Iterable[Passage]) -> dict[str, Extracted]:
        """Passage id -> (triples, rejected), for each distinct passage."""
        result: dict[str, Extracted] = {}
        for batch in self._batches(_unique(passages)):
            result.update(self._extract_batch(batch))
        return result

    def extract_into(self, store: KGStore, passages: Iterable[Passage], show_progress: bool = True,
                     retry_empty: bool = False) -> dict:
        """Extract the passages `store` lacks, grouped by their demonstrations (`_batches`), appending
        each finished batch; safe to interrupt and rerun.

        `retry_empty`: also extract again the passages the LM left without triples (worth it after a
        parser fix); a result with triples replaces the stored one. Those that again give none are
        extracted again by every such run.
        """
        passages = _unique(passages)
        todo = [p for p in passages if not store.has(p.id) or (retry_empty and left_empty(store, p.id))]
        done_triples = done_rejected = replaced = 0
        began = time.perf_counter()
        batches = self._batches(todo, show_progress)
        with tqdm(total=len(todo), desc="extract triples", unit="passage", disable=not show_progress) as bar:
            for batch in batches:
                extracted = self._extract_batch(batch)
                store.add_many(((pid, t, r) for pid, (t, r) in extracted.items()), source="llm")  # the new ones
                replaced += store.replace_many(((pid, t, r) for pid, (t, r) in extracted.items()
                                                if t and left_empty(store, pid)), source="llm")
                done_triples += sum(len(t) for t, _ in extracted.values())
                done_rejected += sum(r for _, r in extracted.values())
                bar.update(len(batch))
                seconds = max(time.perf_counter() - began, 1e-9)
                bar.set_postfix(passages_s=f"{bar.n / seconds:.2f}", triples_s=f"{done_triples / seconds:.1f}")
        return {
            "passages": len(passages),
            "already_stored": len(passages) - len(todo),
            "extracted": len(todo),
            "replaced": replaced,
            "triples": done_triples,
            "rejected": done_rejected,
            "seconds": round(time.perf_counter() - began, 3),
        }


def batched(items: list, size: int) -> list[list]:
    """`items` in consecutive lists of `size` (the last may be shorter)."""
    return [items[start : start + size] for start in range(0, len(items), size)]


def left_empty(store: KGStore, pid: str) -> bool:
    """The LM extracted the stored passage and it has no triples."""
    return store.has(pid) and store.source(pid) == "llm" and not store.get(pid)
