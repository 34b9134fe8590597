"""Traces for calibrating MIND's trigger and entity filter: per-word signals of each generated
sentence, per-token signals of each extracted entity, and their labels.

`traces.jsonl`, one record per question:

    {"question_id": "...",
     "sentences": [{"text": "...", "entropy": [...], "attention": [...], "content": [1, 0, ...], "label": 1}, ...],
     "entities": [{"text": "...", "entropy": [...], "attention": [...], "label": 0}, ...]}

Sentence values are per word (see `inference.uncertainty.word_signals`), entity values per token.
A sentence's label is 1 when it needs retrieval; an entity's is 1 when it is useful.

Labelling (`collect_traces`), from a closed-book run of the LM on training questions:
- a sentence needs retrieval when the closed-book answer is wrong (exact match 0 against every
  gold answer), or when the sentence is not supported by the gold passages: under half of its
  content words (stemmed, stopwords removed) occur in them;
- an entity (extracted by prompt from the question and the closed-book reasoning) is useful when
  it occurs, as a whole-word sequence, in a gold passage or in a gold answer, or a gold answer
  occurs in it.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import lightning as L
import torch
from torch.utils.data import DataLoader

from datamodules.records import DataError, complete_log, field, read_records, split_held_out
from datamodules.silver_chains import contains_words, content_words
from datamodules.types import Passage, Question

log = logging.getLogger(__name__)

SUPPORT = 0.5  # share of a sentence's content words that must occur in the gold passages


def supported(sentence: str, gold_text: str) -> bool:
    words = content_words(sentence)
    return not words or len(words & content_words(gold_text)) / len(words) >= SUPPORT


def useful(entity: str, gold_text: str, answers: Sequence[str]) -> bool:
    return contains_words(gold_text, entity) or any(contains_words(a, entity) or contains_words(entity, a)
                                                    for a in answers)


def question_trace(mind, question: Question, passages: dict[str, Passage]) -> dict[str, Any]:
    """One question's trace: `mind` is a `MindRAG` with trigger "never" and `record_signals=True`."""
    from inference.metrics import answer_scores
    from inference.mind import final_answer
    from inference.retrievers import passage_text

    run = mind.run(question)
    answer = final_answer(run.answer)
    wrong = bool(question.answers) and answer_scores(answer, question.answers)["em"] == 0
    gold = " ".join(passage_text(passages[pid]) for pid in question.gold_passage_ids)
    sentences = [{"text": step["sentence"], **step["signals"],
                  "label": int(wrong or not supported(step["sentence"], gold))}
                 for step in run.trace if step.get("signals", {}).get("entropy")]  # not the forced answer
    entities = [{"text": e.text, "entropy": e.entropy, "attention": e.attention,
                 "label": int(useful(e.text, gold, question.answers))}
                for e in mind.entities(question.question, run.answer) if e.entropy]
    return {"question_id": question.id, "closed_book_answer": answer, "sentences": sentences, "entities": entities}


def collect_traces(mind, questions: Sequence[Question], passages: dict[str, Passage], output: str | Path,
                   show_progress: bool = True) -> dict[str, int]:
    """Append the traces of the questions not yet in `output` (one fsynced line each: resumable).

    Returns the counts, with the labels of the whole file: a kind whose labels are all alike
    teaches the calibration nothing.
    """
    from tqdm.auto import tqdm

    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    records = [json.loads(line) for line in complete_log(output).splitlines()]
    done = {r["question_id"] for r in records}
    todo = [q for q in questions if q.id not in done]
    with open(output, "a", encoding="utf-8") as f:
        for question in tqdm(todo, desc="traces", unit="question", disable=not show_progress):
            records.append(question_trace(mind, question, passages))
            f.write(json.dumps(records[-1]) + "\n")
            f.flush()
            os.fsync(f.fileno())
    return {"questions": len(questions), "already_written": len(done & {q.id for q in questions}), "written": len(todo),
            **label_counts(records)}


def label_counts(traces: Sequence[dict[str, Any]]) -> dict[str, int]:
    """How many sentences and entities the traces hold, and how many of each are labelled 1."""
    sentences = [s["label"] for t in traces for s in t["sentences"]]
    entities = [e["label"] for t in traces for e in t["entities"]]
    return {"sentences": len(sentences), "sentences_needing_retrieval": int(sum(sentences)),
            "entities": len(entities), "useful_entities": int(sum(entities))}


def _numbers(record: dict, name: str, path, where: str) -> list[float]:
    values = field(record, name, list, path, where)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise DataError(path, where, f"field '{name}' should be a list of numbers")
    return [float(v) for v in values]


def _label(record: dict, path, where: str) -> float:
    label = record.get("label")
    if label not in (0, 1, True, False):
        raise DataError(path, where, f"field 'label' should be 0 or 1, found {label!r}")
    return float(label)


def read_traces(path: str | Path) -> list[dict[str, Any]]:
    """Read and check `traces.jsonl`; bad input raises a `DataError` naming the line and field."""
    questions = []
    for where, record in read_records(path):
        sentences, entities = [], []
        for i, s in enumerate(field(record, "sentences", list, path, where)):
            at = f"{where}, sentences[{i}]"
            h, a, c = (_numbers(s, name, path, at) for name in ("entropy", "attention", "content"))
            if not len(h) == len(a) == len(c):
                raise DataError(path, at, "entropy, attention and content should have one value per word")
            sentences.append({"entropy": h, "attention": a, "content": c, "label": _label(s, path, at)})
        for i, e in enumerate(field(record, "entities", list, path, where)):
            at = f"{where}, entities[{i}]"
            h, a = (_numbers(e, name, path, at) for name in ("entropy", "attention"))
            if len(h) != len(a):
                raise DataError(path, at, "entropy and attention should have one value per token")
            entities.append({"entropy": h, "attention": a, "label": _label(e, path, at)})
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
        for name in names:
            batch[f"{prefix}_{name}"], batch[f"{prefix}_mask"] = _pad([item[name] for item in items])
        batch[f"{prefix}_label"] = torch.tensor([item["label"] for item in items], dtype=torch.float32)
    return batch


class TriggerTraceDataModule(L.LightningDataModule):
    """Traces split by question into training and validation (`val_fraction`, `seed`)."""

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
