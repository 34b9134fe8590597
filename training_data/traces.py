"""`prepare.py traces`: labelled closed-book traces of the LM on training questions, to calibrate MIND's
trigger and entity filter (`datamodules.trigger_traces` reads them for `TriggerCalibrator`).

Each sentence and entity keeps both kinds of attention (`raw`, `attention_in_sentence`), so one
file calibrates either. Labelling, from a closed-book run of the LM on training questions:
- a sentence's label is its own, not the question's (a weak LM is wrong on almost every question,
  and "closed-book answer wrong" labelled nearly every sentence "retrieve"). Its new claims are
  the names (runs of capitalised words, stopwords at their ends trimmed; the sentence's first word
  alone is capitalised by position, so it is not taken) and numbers that the question does not
  contain. The LM generates the sentence again from the same answer so far with the gold passages
  as MIND's memory (one more generation per sentence). `sentence_label` says what needs retrieval:
  - `change` (the default): retrieval changes what the sentence claims, i.e. the regeneration makes
    other claims. A sentence the gold passages leave as it was gains nothing from a retrieval, right
    or wrong;
  - `claims`: also any claim not in the gold passages (as a whole-word sequence). The packaged LM
    names something unsupported in almost every sentence, so this labels nearly all of them, and
    MIND's signals rank these labels no better than chance, where they do rank `change`
    (benchmarks/results/mind_validation.md, "The label rules").
  A sentence without claims (restating the question, say) is labelled 0 either way unless the gold
  passages make the LM state something. Labels follow from the stored texts, so a file labelled by
  the other rule is relabelled without the LM;
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
from typing import Any, Literal, get_args

from tqdm.auto import tqdm

from core.config import ConfigError, require_positive
from core.records import DataError, append_log, exclusive_output, log_records, write_atomic
from core.text import STOPWORDS, contains_words, tokens
from core.types import Passage, Question
from datamodules.loaders import DataConfig
from inference.memory import Fact, Memory
from inference.mind import EntitySignals, MindRAG, MindRun, MindSettings, final_answer
from inference.retrievers import passage_text
from models.lm.config import LMConfig

SentenceLabel = Literal["change", "claims"]


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
    sentence_label: SentenceLabel = "change"
    """what makes a sentence need retrieval: `change`, the gold passages change its claims; `claims`, that or
    a claim the gold passages lack (see the module docstring)"""

    def __post_init__(self) -> None:
        require_positive(self, "max_sentences")
        if self.sentence_label not in get_args(SentenceLabel):
            raise ConfigError("sentence_label", f"must be one of {', '.join(get_args(SentenceLabel))}, "
                                                f"got {self.sentence_label!r}")


def build_traces(config: TracesConfig) -> dict[str, int]:
    """Trace every question of `config.data` not yet in `config.output`; returns the counts and labels."""
    benchmark = config.data.load()
    settings = MindSettings(max_sentences=config.max_sentences, entity_signals=config.entity_signals)
    mind = MindRAG(config.lm.build(), None, trigger="never", settings=settings, record_signals=True)
    return collect_traces(mind, benchmark.questions, benchmark.passage_by_id(), config.output, config.sentence_label)


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


def needs_retrieval(sentence: str, regenerated: str, question: str, gold_text: str,
                    rule: SentenceLabel = "change") -> bool:
    """Other claims once the LM sees the gold passages, or with `rule` "claims" also a claim they lack."""
    made = claims(sentence, question)
    unsupported = rule == "claims" and not all(contains_words(gold_text, c) for c in made)
    return unsupported or claims(regenerated, question) != made


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


def gold_text(question: Question, passages: dict[str, Passage]) -> str:
    return " ".join(passage_text(passages[pid]) for pid in question.gold_passage_ids)


def question_trace(mind: MindRAG, question: Question, passages: dict[str, Passage],
                   rule: SentenceLabel = "change") -> dict[str, Any]:
    """One question's trace: `mind` is a `MindRAG` with trigger "never" and `record_signals=True`."""
    run = mind.run(question)
    gold_passages = [passages[pid] for pid in question.gold_passage_ids]
    gold = gold_text(question, passages)
    steps = [step for step in run.trace if step.get("signals", {}).get("entropy")]  # not the forced answer
    regenerated = regenerations(mind, question, gold_passages, [step["sentence"] for step in steps])
    sentences = [{"text": step["sentence"], **step["signals"], "regenerated": again}
                 for step, again in zip(steps, regenerated, strict=True)]
    entities = [{"text": e.text, "entropy": e.entropy, "attention": e.attention, "source": e.source,
                 "attention_in_sentence": e.attention_in_sentence, "label": int(useful(e.text, gold, question.answers))}
                for e in mind.entities(question.question, run.answer, run.drafts) if e.entropy]
    return relabel({"question_id": question.id, "closed_book_answer": final_answer(run.answer), "sentences": sentences,
                    "entities": entities}, question, passages, rule)


def relabel(record: dict[str, Any], question: Question, passages: dict[str, Passage],
            rule: SentenceLabel) -> dict[str, Any]:
    """`record` (a question's trace) with its sentences labelled by `rule`, from their stored texts."""
    gold = gold_text(question, passages)
    sentences = [{**s, "label": int(needs_retrieval(s["text"], s["regenerated"], question.question, gold, rule))}
                 for s in record["sentences"]]
    return {**record, "sentence_label": rule, "sentences": sentences}


def collect_traces(mind: MindRAG, questions: Sequence[Question], passages: dict[str, Passage], output: str | Path,
                   rule: SentenceLabel = "change", show_progress: bool = True) -> dict[str, int]:
    """Append the traces of the questions not yet in `output` (one fsynced line each: resumable), after
    relabelling by `rule` those written by another (a record without `sentence_label` was labelled `claims`).

    Returns the counts, with the labels of the whole file: a kind whose labels are all alike
    teaches the calibration nothing.
    """
    by_id = {q.id: q for q in questions}
    with exclusive_output(output, is_folder=False) as output:
        records, stale = [], False
        for where, record in log_records(output):
            if (labelled_by := record.get("sentence_label", "claims")) != rule:
                if record["question_id"] not in by_id:
                    raise DataError(output, where, f"labelled by rule {labelled_by!r}, and its question "
                                    f"{record['question_id']!r} is not among the {len(questions)} traced, which "
                                    f"relabelling by {rule!r} needs")
                record, stale = relabel(record, by_id[record["question_id"]], passages, rule), True
            records.append(record)
        if stale:
            write_atomic(output, "".join(json.dumps(r) + "\n" for r in records))
        done = {r["question_id"] for r in records}
        todo = [q for q in questions if q.id not in done]
        with append_log(output) as f:
            for question in tqdm(todo, desc="traces", unit="question", disable=not show_progress):
                records.append(question_trace(mind, question, passages, rule))
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
