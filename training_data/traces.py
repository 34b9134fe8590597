"""`prepare.py traces`: labelled closed-book traces of the LM on training questions, to calibrate MIND's
trigger and entity filter (`datamodules.trigger_traces` reads them for `TriggerCalibrator`).

Labelling, from a closed-book run of the LM on training questions:
- a sentence needs retrieval when the closed-book answer is wrong (exact match 0 against every
  gold answer), or when the sentence is not supported by the gold passages: under half of its
  content words (stemmed, stopwords removed) occur in them;
- an entity (extracted by prompt from the question and the closed-book reasoning) is useful when
  it occurs, as a whole-word sequence, in a gold passage or in a gold answer, or a gold answer
  occurs in it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from core.config import require_positive
from core.records import log_records
from core.text import answer_scores, contains_words, content_words
from core.types import Passage, Question
from datamodules.loaders import DataConfig
from inference.mind import MindRAG, final_answer
from inference.retrievers import passage_text
from models.lm_config import LMConfig


@dataclass
class TracesConfig:
    """Closed-book traces of an LM on training questions, labelled for calibration."""

    data: DataConfig = field(default_factory=DataConfig)
    """the training questions (`data.limit`: the first N)"""
    output: str = "runs/traces/demo/traces.jsonl"
    """the traces file; a rerun skips the questions already in it"""
    lm: LMConfig = field(default_factory=LMConfig)
    """the LM whose closed-book answers are traced"""
    max_sentences: int = 6
    """the longest closed-book reasoning, in sentences"""

    def __post_init__(self) -> None:
        require_positive(self, "max_sentences")


def build_traces(config: TracesConfig) -> dict[str, int]:
    """Trace every question of `config.data` not yet in `config.output`; returns the counts and labels."""
    benchmark = config.data.load()
    mind = MindRAG(config.lm.build(), None, trigger="never", max_sentences=config.max_sentences, record_signals=True)
    return collect_traces(mind, benchmark.questions, benchmark.passage_by_id(), config.output)


SUPPORT = 0.5  # share of a sentence's content words that must occur in the gold passages


def supported(sentence: str, gold_text: str) -> bool:
    words = content_words(sentence)
    return not words or len(words & content_words(gold_text)) / len(words) >= SUPPORT


def useful(entity: str, gold_text: str, answers: Sequence[str]) -> bool:
    return contains_words(gold_text, entity) or any(contains_words(a, entity) or contains_words(entity, a)
                                                    for a in answers)


def question_trace(mind: MindRAG, question: Question, passages: dict[str, Passage]) -> dict[str, Any]:
    """One question's trace: `mind` is a `MindRAG` with trigger "never" and `record_signals=True`."""
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


def collect_traces(mind: MindRAG, questions: Sequence[Question], passages: dict[str, Passage], output: str | Path,
                   show_progress: bool = True) -> dict[str, int]:
    """Append the traces of the questions not yet in `output` (one fsynced line each: resumable).

    Returns the counts, with the labels of the whole file: a kind whose labels are all alike
    teaches the calibration nothing.
    """
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    records = [record for _, record in log_records(output)]
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
