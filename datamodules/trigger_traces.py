"""The data of MIND's trigger calibration: traces of per-word signals of each generated sentence and
per-token signals of each extracted entity, with their labels, as batches for `TriggerCalibrator`.

`traces.jsonl`, one record per question:

    {"question_id": "...",
     "sentences": [{"text": "...", "entropy": [...], "attention": [...], "attention_in_sentence": [...],
                    "content": [1, 0, ...], "label": 1}, ...],
     "entities": [{"text": "...", "entropy": [...], "attention": [...], "attention_in_sentence": [...],
                   "label": 0}, ...]}

Sentence values are per word (see `models.uncertainty.word_signals`), entity values per token.
`attention` is the raw attention, `attention_in_sentence` the one renormalised over the generated
tokens (absent from traces written before it existed); a batch holds the second only when all its
sentences (or entities) have it, and the `TriggerCalibrator` reads the kind it calibrates.
A sentence's label is 1 when it needs retrieval; an entity's is 1 when it is useful.
`training_data.traces` writes these files (`prepare.py traces`) and documents the labelling.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

import lightning as L
import torch
from torch.utils.data import DataLoader

from core.records import DataError, field, read_records, split_held_out

log = logging.getLogger(__name__)

def _numbers(record: dict, name: str, path, where: str) -> list[float]:
    values = field(record, name, list, path, where)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
        raise DataError(path, where, f"field '{name}' should be a list of finite numbers")
    return [float(v) for v in values]


def _label(record: dict, path, where: str) -> float:
    label = record.get("label")
    if label not in (0, 1, True, False):
        raise DataError(path, where, f"field 'label' should be 0 or 1, found {label!r}")
    return float(label)


def _signals(record: dict, names: tuple[str, ...], path, where: str, unit: str) -> dict[str, list[float]]:
    """The lists `names` (and `attention_in_sentence` where present), all of one length."""
    present = names + (("attention_in_sentence",) if "attention_in_sentence" in record else ())
    values = {name: _numbers(record, name, path, where) for name in present}
    if len({len(v) for v in values.values()}) > 1:
        raise DataError(path, where, f"{', '.join(present)} should have one value per {unit}")
    return values


def read_traces(path: str | Path) -> list[dict[str, Any]]:
    """Read and check `traces.jsonl`; bad input raises a `DataError` naming the line and field."""
    questions = []
    for where, record in read_records(path):
        sentences, entities = [], []
        for i, s in enumerate(field(record, "sentences", list, path, where)):
            at = f"{where}, sentences[{i}]"
            values = _signals(s, ("entropy", "attention", "content"), path, at, "word")
            sentences.append({**values, "label": _label(s, path, at)})
        for i, e in enumerate(field(record, "entities", list, path, where)):
            at = f"{where}, entities[{i}]"
            entities.append({**_signals(e, ("entropy", "attention"), path, at, "token"), "label": _label(e, path, at)})
        questions.append({"question_id": field(record, "question_id", str, path, where),
                          "sentences": sentences, "entities": entities})
    return questions


def _pad(rows: list[list[float]]) -> tuple[torch.Tensor, torch.Tensor]:
    width = max((len(r) for r in rows), default=0)
    values = torch.zeros(len(rows), max(width, 1))
    mask = torch.zeros(len(rows), max(width, 1), dtype=torch.bool)
    for i, r in enumerate(rows):
        values[i, : len(r)] = torch.tensor(r)
        mask[i, : len(r)] = True
    return values, mask


def collate(questions: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
    """Sentences and entities of a batch of questions as padded (items, width) tensors with masks."""
    sentences = [s for q in questions for s in q["sentences"] if s["entropy"]]
    entities = [e for q in questions for e in q["entities"] if e["entropy"]]
    batch = {}
    for prefix, items, names in (("sentence", sentences, ("entropy", "attention", "content")),
                                 ("entity", entities, ("entropy", "attention"))):
        if all("attention_in_sentence" in item for item in items):
            names += ("attention_in_sentence",)
        for name in names:
            batch[f"{prefix}_{name}"], batch[f"{prefix}_mask"] = _pad([item[name] for item in items])
        batch[f"{prefix}_label"] = torch.tensor([item["label"] for item in items], dtype=torch.float32)
    return batch


class TriggerTraceDataModule(L.LightningDataModule):
    """Traces split by question into training and validation sets.

    Args:
        traces: the `traces.jsonl` to learn from (`prepare.py traces` writes it).
        val_fraction: share of questions held out for validation.
        batch_size: questions per batch (all their sentences and entities).
        seed: seeds the split and the shuffling.
    """

    def __init__(self, traces: str, val_fraction: float = 0.2, batch_size: int = 16, seed: int = 0) -> None:
        super().__init__()
        if not 0 <= val_fraction < 1:
            raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction}")
        self.save_hyperparameters()
        self.train_questions: list[dict[str, Any]] = []
        self.val_questions: list[dict[str, Any]] = []

    def setup(self, stage: str | None = None) -> None:
        if self.train_questions:
            return
        questions = read_traces(self.hparams.traces)
        if not questions:
            raise DataError(self.hparams.traces, None, "no traces")
        self.train_questions, self.val_questions = split_held_out(questions, self.hparams.val_fraction,
                                                                  self.hparams.seed)
        for kind, what in (("sentences", "when to retrieve (only the cost sets how often)"),
                           ("entities", "which entities to keep")):
            labels = {item["label"] for q in self.train_questions for item in q[kind]}
            if len(labels) == 1:
                log.warning("%s: every training label of the %s is %d, so calibration cannot learn %s",
                            self.hparams.traces, kind, labels.pop(), what)

    def train_dataloader(self) -> DataLoader:
        generator = torch.Generator().manual_seed(self.hparams.seed)
        return DataLoader(self.train_questions, batch_size=self.hparams.batch_size, shuffle=True,
                          collate_fn=collate, generator=generator)

    def val_dataloader(self) -> DataLoader | list:
        if not self.val_questions:
            return []
        return DataLoader(self.val_questions, batch_size=self.hparams.batch_size, collate_fn=collate)
