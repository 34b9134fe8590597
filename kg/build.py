"""`prepare.py kg`: a corpus's knowledge triples into a KG store, by LLM extraction or an OpenIE import."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path

from core.config import ConfigError, require_non_negative, require_positive
from core.types import Passage
from datamodules.loaders import DataConfig
from kg.archive import TRIPLES_NAME, read_archive, restore_archive, restore_entries, save_archive
from kg.extraction import TripleExtractor, extraction_notice, left_empty
from kg.openie_import import import_openie
from kg.prompt import prompt_fingerprint
from kg.store import KGStore
from models.encoder import Encoder
from models.lm.config import LMConfig

log = logging.getLogger(__name__)


@dataclass
class KGConfig:
    """Which corpus, which store, and how to extract (or import) its triples."""

    data: DataConfig = field(default_factory=DataConfig)
    """the corpus whose passages get triples"""
    store: str = "runs/kg/demo"
    """the KG store folder; a rerun continues where an interrupted one stopped"""
    archive: str | None = None
    """a committed archive folder (`data/kg/<corpus>`, see kg/archive.py): its passages are copied
    into the store first, and the store's new ones written back after, even if interrupted"""
    restore_from: list[str] = field(default_factory=list)
    """other committed archives of passages of this corpus (another config's subset, such as its gold
    passages): copied into the store first, never written to, so `archive` holds only the rest"""
    openie: str | None = None
    """import these HippoRAG OpenIE triples instead of extracting"""
    lm: LMConfig = field(default_factory=LMConfig)
    """the extraction LM"""
    encoder: str = "minilm"
    """the encoder that chooses the few-shot demonstrations per passage"""
    num_demos: int = 5
    """demonstrations per passage"""
    batch_size: int = 8
    """passages generated together, and stored together"""
    max_new_tokens: int = 512
    """the longest extraction output"""
    retry_empty: bool = False
    """extract again the passages the LM left without triples (after a parser fix); a new result with
    triples replaces the stored one, in the store and the archive"""
    only_gold: bool = False
    """only the questions' gold passages (enough for chains without negatives)"""
    limit: int | None = None
    """only the first N corpus passages"""

    def __post_init__(self) -> None:
        require_positive(self, "batch_size", "max_new_tokens", "limit")
        require_non_negative(self, "num_demos")
        for folder in self.restore_from:
            if not (Path(folder) / TRIPLES_NAME).is_file():
                raise ConfigError("restore_from", f"{folder} holds no KG archive ({TRIPLES_NAME})")


def build_kg(config: KGConfig) -> dict:
    """Extract (or import) the triples of the passages the store lacks; returns counts and the store's stats."""
    passages = kg_passages(config)
    store = KGStore(config.store)
    others = [read_archive(folder) for folder in config.restore_from]
    restored = sum(restore_entries(entries, store) for entries in others)
    restored += restore_archive(config.archive, store) if config.archive else 0
    held_elsewhere = {pid for entries in others for pid in entries}
    retry = config.retry_empty and not config.openie
    retried = [p.id for p in passages if left_empty(store, p.id)] if retry else []
    try:
        if config.openie:
            summary = import_openie(config.openie, passages, store)
        else:
            if notice := extraction_notice(store, passages, config.lm.resolved_backend()):
                log.warning(notice)
            encoder = Encoder(config.encoder) if config.num_demos else None
            extractor = TripleExtractor(config.lm.build(), encoder, num_demos=config.num_demos,
                                        batch_size=config.batch_size, max_new_tokens=config.max_new_tokens)
            summary = extractor.extract_into(store, passages, retry_empty=config.retry_empty)
    finally:
        if config.archive:
            added, replaced = save_archive(config.archive, store,
                                           (p.id for p in passages if p.id not in held_elsewhere),
                                           archive_settings(config),
                                           replaced=[pid for pid in retried if store.get(pid)])
            log.info("archive %s: %d passages restored, %d added, %d replaced", config.archive, restored, added,
                     replaced)
    if config.archive:
        summary["archive"] = {"folder": config.archive, "restored": restored, "added": added, "replaced": replaced}
    summary["store"] = store.stats()
    return summary


def kg_passages(config: KGConfig) -> list[Passage]:
    """The passages `build_kg` gives triples: the corpus, or its gold passages (`only_gold`), up to `limit`."""
    benchmark = config.data.load()
    passages = benchmark.passages
    if config.only_gold:
        gold = {pid for q in benchmark.questions for pid in q.gold_passage_ids}
        passages = [p for p in passages if p.id in gold]
    return passages[: config.limit]


def pending_passages(config: KGConfig) -> tuple[list[str], int]:
    """The ids of the passages `build_kg` still has to give triples (those the store lacks, even if an
    archive holds them, and with `retry_empty` those the LM left empty), and how many it covers."""
    passages = kg_passages(config)
    if not Path(config.store).is_dir():
        return [p.id for p in passages], len(passages)
    store = KGStore(config.store, create=False)
    missing = set(store.missing(p.id for p in passages))
    retry = config.retry_empty and not config.openie
    return [p.id for p in passages if p.id in missing or retry and left_empty(store, p.id)], len(passages)


def archive_settings(config: KGConfig) -> dict:
    """What made the triples, for the archive's provenance."""
    if config.openie:
        return {"corpus": asdict(config.data), "openie": config.openie}
    return {
        "corpus": asdict(config.data), "lm": asdict(config.lm), "backend": config.lm.resolved_backend(),
        "prompt": prompt_fingerprint(), "encoder": config.encoder, "num_demos": config.num_demos,
        "batch_size": config.batch_size, "max_new_tokens": config.max_new_tokens,
    }
