"""KiRAG's offline triple extraction with a chat LM, into a resumable `KGStore`, and on demand."""

from __future__ import annotations

import time
from collections.abc import Iterable

from tqdm.auto import tqdm

from datamodules.kg_store import KGStore
from datamodules.triple_prompt import Demo, DemoSelector, Message, build_prompt, load_demos
from datamodules.triples import Triple, parse_triples
from datamodules.types import Passage

Extracted = tuple[list[Triple], int]  # (triples, number of rejected `<...>` matches)


def _unique(passages: Iterable[Passage]) -> list[Passage]:
    """Each passage once, in order of first appearance."""
    first: dict[str, Passage] = {}
    for p in passages:
        first.setdefault(p.id, p)
    return list(first.values())


class TripleExtractor:
    """Extracts `<head; relation; tail>` triples from passages with a few-shot chat prompt.

    `lm` is anything with `chat(conversations, max_new_tokens=, batch_size=, stop_repeated_lines=)
    -> [obj with .text]` (`models.lm.CausalLM`); decoding settings (greedy in the paper) belong to the LM.
    `encoder` chooses the demonstrations; it defaults to the packaged MiniLM, loaded only when
    `num_demos > 0`.
    """

    def __init__(
        self,
        lm,
        encoder=None,
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
            from models.encoder import Encoder

            encoder = Encoder("minilm")
        self.selector = DemoSelector(encoder, self.demos) if num_demos else None
        self.num_demos = num_demos
        self.batch_size = batch_size
        self.max_new_tokens = max_new_tokens

    def prompts(self, passages: list[Passage]) -> list[list[Message]]:
        chosen = self.selector.select(passages, self.num_demos) if self.selector else [[] for _ in passages]
        return [build_prompt(p, demos) for p, demos in zip(passages, chosen)]

    def _extract_batch(self, passages: list[Passage]) -> dict[str, Extracted]:
        outputs = self.lm.chat(
            self.prompts(passages), max_new_tokens=self.max_new_tokens, batch_size=self.batch_size, stop_repeated_lines=True
        )
        result = {}
        for passage, output in zip(passages, outputs, strict=True):
            parts, rejected = parse_triples(output.text)
            result[passage.id] = ([Triple.make(*t, passage.id, passage.sentences) for t in parts], rejected)
        return result

    def _batches(self, passages: list[Passage]) -> Iterable[list[Passage]]:
        for start in range(0, len(passages), self.batch_size):
            yield passages[start : start + self.batch_size]

    def extract(self, passages: Iterable[Passage]) -> dict[str, Extracted]:
        """Passage id -> (triples, rejected), for each distinct passage."""
        result: dict[str, Extracted] = {}
        for batch in self._batches(_unique(passages)):
            result.update(self._extract_batch(batch))
        return result

    def extract_into(self, store: KGStore, passages: Iterable[Passage], show_progress: bool = True) -> dict:
        """Extract the passages `store` lacks, appending each finished batch; safe to interrupt and rerun."""
        passages = _unique(passages)
        todo = [p for p in passages if not store.has(p.id)]
        done_triples = done_rejected = 0
        began = time.perf_counter()
        with tqdm(total=len(todo), desc="extract triples", unit="passage", disable=not show_progress) as bar:
            for batch in self._batches(todo):
                extracted = self._extract_batch(batch)
                store.add_many(((pid, t, r) for pid, (t, r) in extracted.items()), source="llm")
                done_triples += sum(len(t) for t, _ in extracted.values())
                done_rejected += sum(r for _, r in extracted.values())
                bar.update(len(batch))
                seconds = max(time.perf_counter() - began, 1e-9)
                bar.set_postfix(passages_s=f"{bar.n / seconds:.2f}", triples_s=f"{done_triples / seconds:.1f}")
        return {
            "passages": len(passages),
            "already_stored": len(passages) - len(todo),
            "extracted": len(todo),
            "triples": done_triples,
            "rejected": done_rejected,
            "seconds": round(time.perf_counter() - began, 3),
        }


class KnowledgeGraph:
    """The triples of any corpus passage: read from the store, or extracted and stored on first use."""

    def __init__(self, store: KGStore, extractor: TripleExtractor | None, passages_by_id: dict[str, Passage]) -> None:
        self.store = store
        self.extractor = extractor
        self.passages_by_id = passages_by_id

    def get(self, pid: str) -> list[Triple]:
        return self.get_many([pid])[pid]

    def get_many(self, pids: Iterable[str]) -> dict[str, list[Triple]]:
        """Triples per passage id; the missing passages are extracted together, in batches."""
        pids = list(dict.fromkeys(pids))
        missing = self.store.missing(pids)
        if missing:
            if self.extractor is None:
                raise KeyError(f"no stored triples for passage(s) {missing[:5]} and no extractor to make them")
            unknown = [pid for pid in missing if pid not in self.passages_by_id]
            if unknown:
                raise KeyError(f"passage id(s) {unknown[:5]} are not in the corpus")
            self.extractor.extract_into(self.store, [self.passages_by_id[p] for p in missing], show_progress=False)
        return {pid: self.store.get(pid) for pid in pids}
