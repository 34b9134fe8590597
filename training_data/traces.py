"""`prepare.py traces`: labelled closed-book traces of the LM on training questions, to calibrate MIND's
trigger and entity filter (`datamodules.trigger_traces` reads them for `TriggerCalibrator`).

Each sentence and entity keeps both kinds of attention (`raw`, `attention_in_sentence`), so one
file calibrates either. Labelling, from a closed-book run of the LM on training questions:
- a sentence's label is its own, not the question's (a weak LM is wrong on almost every question,
  and "closed-book answer wrong" labelled nearly every sentence "retrieve"). Its new claims are
  the names (runs of capitalised words, stopwords at their ends trimmed; the sentence's first word
  alone is capitalised by position, so it is not taken) and numbers that the question does not
  contain. The sentence needs retrieval when one of its claims is not in the gold passages (as a
  whole-word sequence), or when the LM, regenerating it from the same answer so far with the gold
  passages as MIND's memory, makes other claims. So a sentence without claims (restating the
  question, say) is labelled 0 unless the gold passages make the LM state something; this costs
  one more generation per sentence;
- an entity (extracted by prompt from the question and the closed-book reasoning; its signals read
  where MIND reads them, `entity_signals`, and the place recorded as `source`) is useful when
  it occurs, as a whole-word sequence, in a gold passage or in a gold answer, or a gold answer
  occurs in it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from core.config import require_positive
from core.records import append_log, exclusive_output, log_records
from core.text import STOPWORDS, contains_words, tokens
from core.types import Passage, Question
from datamodules.loaders import DataConfig
from inference.memory import Fact, Memory
from inference.mind import EntitySignals, MindRAG, MindRun, MindSettings, final_answer
from inference.retrievers import passage_text
from models.lm.config import LMConfig


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
    entity_signals: EntitySignals = "reasoning"
    """where the entities' signals are read, as MIND reads them (`mind.entity_signals`): calibrate on the same"""

    def __post_init__(self) -> None:
        require_positive(self, "max_sentences")


def build_traces(config: TracesConfig) -> dict[str, int]:
    """Trace every question of `config.data` not yet in `config.output`; returns the counts and labels."""
    benchmark = config.data.load()
    settings = MindSettings(max_sentences=config.max_sentences, entity_signals=config.entity_signals)
    mind = MindRAG(config.lm.build(), None, trigger="never", settings=settings, record_signals=True)
    return collect_traces(mind, benchmark.questions, benchmark.passage_by_id(), config.output)


_NAME = re.compile(r"\b[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def claims(sentence: str, question: str) -> frozenset[str]:
    """The names and numbers of `sentence` that `question` does not contain, normalised (`core.text.tokens`)."""
    found = [m.group() for m in _NUMBER.finditer(sentence)]
    for match in _NAME.finditer(sentence):
        words = match.group().split()
        first = not any(c.isalnum() for c in sentence[: match.start()])
        while words and words[0].lower() in STOPWORDS:
            words, first = words[1:], False
        while words and words[-1].lower() in STOPWORDS:
            words = words[:-1]
        if words and not (first and len(words) == 1):
            found.append(" ".join(words))
    normalised = (" ".join(tokens(claim)) for claim in found)
    return frozenset(c for c in normalised if c and not contains_words(question, c))


def needs_retrieval(sentence: str, regenerated: str, question: str, gold_text: str) -> bool:
    """A claim not in the gold passages, or other claims once the LM sees them (see the module docstring)."""
    made = claims(sentence, question)
    return not all(contains_words(gold_text, c) for c in made) or claims(regenerated, question) != made


def useful(entity: str, gold_text: str, answers: Sequence[str]) -> bool:
    return contains_words(gold_text, entity) or any(contains_words(a, entity) or contains_words(entity, a)
                                                    for a in answers)


def regenerations(mind: MindRAG, question: Question, gold: Sequence[Passage], drafts: Sequence[str]) -> list[str]:
    """Each closed-book sentence generated again from the same answer so far, with the gold passages
    in memory as MIND's retrieved facts ("title: text")."""
    state = MindRun(question, Memory(max(len(gold), 1)))
    for p in gold:
        state.memory.add(Fact(f"{p.title}: {p.text}", 1.0, p.id))
    regenerated = []
    for draft in drafts:
        regenerated.append(mind.next_sentence(state, signals=False).text)
        state.add_sentence(draft.strip())
    return regenerated


def question_trace(mind: MindRAG, question: Question, passages: dict[str, Passage]) -> dict[str, Any]:
    """One question's trace: `mind` is a `MindRAG` with trigger "never" and `record_signals=True`."""
    run = mind.run(question)
    gold_passages = [passages[pid] for pid in question.gold_passage_ids]
    gold = " ".join(passage_text(p) for p in gold_passages)
    steps = [step for step in run.trace if step.get("signals", {}).get("entropy")]  # not the forced answer
    regenerated = regenerations(mind, question, gold_passages, [step["sentence"] for step in steps])
    sentences = [{"text": step["sentence"], **step["signals"], "regenerated": again,
                  "label": int(needs_retrieval(step["sentence"], again, question.question, gold))}
                 for step, again in zip(steps, regenerated, strict=True)]
    entities = [{"text": e.text, "entropy": e.entropy, "attention": e.attention, "source": e.source,
                 "attention_in_sentence": e.attention_in_sentence, "label": int(useful(e.text, gold, question.answers))}
                for e in mind.entities(question.question, run.answer, run.drafts) if e.entropy]
    return {"question_id": question.id, "closed_book_answer": final_answer(run.answer), "sentences": sentences,
            "entities": entities}


def collect_traces(mind: MindRAG, questions: Sequence[Question], passages: dict[str, Passage], output: str | Path,
                   show_progress: bool = True) -> dict[str, int]:
    """Append the traces of the questions not yet in `output` (one fsynced line each: resumable).

    Returns the counts, with the labels of the whole file: a kind whose labels are all alike
    teaches the calibration nothing.
    """
    with exclusive_output(output, is_folder=False) as output:
        records = [record for _, record in log_records(output)]
        done = {r["question_id"] for r in records}
        todo = [q for q in questions if q.id not in done]
        with append_log(output) as f:
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
