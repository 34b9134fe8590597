"""Loaders for the published multi-hop QA formats, all producing `Question`s and `Passage`s.

Each format's question loader turns a record into a `Question` plus its context passages and
its gold passages as (title, text or None). `load_benchmark` then builds the corpus (a corpus
file, or the deduplicated union of the questions' contexts) and resolves every gold passage to a
corpus id: by title and text, or by title alone when the title is unique in the corpus.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import asdict, dataclass, field as dc_field, fields as dc_fields
from pathlib import Path
from typing import Any, Callable, Literal, get_args

from datasets import Dataset

from core.config import require_non_negative, require_positive
from core.records import DataError, check_settings, exclusive_output, field, read_json, read_records, write_atomic
from core.text import normalize_space
from core.types import Passage, Question, passage_id

DEMO_DIR = Path(__file__).parent / "demo"
DEMO_QUESTIONS = str(DEMO_DIR / "questions.jsonl")

Format = Literal["2wiki", "hipporag", "hotpotqa", "ircot", "musique", "plain", "unified"]
FORMATS = get_args(Format)


@dataclass
class Benchmark:
    """Questions with gold passage ids that all resolve into `passages`."""

    questions: list[Question]
    passages: list[Passage]

    def passage_by_id(self) -> dict[str, Passage]:
        return {p.id: p for p in self.passages}


@dataclass
class DataConfig:
    """Which benchmark to load; the defaults are the built-in demo data."""

    format: Format = "unified"
    """the questions file's format (`hipporag`: any published one, detected from the first record)"""
    questions: str = DEMO_QUESTIONS
    """the questions file (.json or .jsonl)"""
    corpus: str | None = None
    """the corpus file; null: the union of the questions' contexts (unified questions: the
    `passages.jsonl` beside them, as `prepare.py data` writes it)"""
    gold_titles: str | None = None
    """gold titles for a `plain` question list"""
    limit: int | None = None
    """only the first N questions (after `offset`)"""
    offset: int = 0
    """skip the first questions: e.g. a calibration split disjoint from the evaluated one"""

    def __post_init__(self) -> None:
        require_positive(self, "limit")
        require_non_negative(self, "offset")

    def load(self) -> Benchmark:
        return load_benchmark(self.format, self.questions, self.corpus, self.gold_titles, self.limit, self.offset)

    def corpus_file(self) -> Path | None:
        """The corpus file `load` reads: `corpus`, or the `passages.jsonl` beside unified questions; None
        when the corpus is the questions' own contexts."""
        return corpus_file(self.format, self.questions, self.corpus)


def corpus_file(format: str, questions: str | Path, corpus: str | Path | None) -> Path | None:
    """`corpus`, or for unified questions without one the `passages.jsonl` `prepare.py data` writes beside them."""
    if corpus is not None:
        return Path(corpus)
    return Path(questions).with_name("passages.jsonl") if format == "unified" else None


@dataclass
class _Parsed:
    """One question record as read, before gold passages are resolved against the corpus."""

    question: Question
    where: str
    context: list[Passage] = dc_field(default_factory=list)
    gold: list[tuple[str, str | None]] = dc_field(default_factory=list)  # (title, text or None)


Reader = Callable[[Any, Path, str], _Parsed]


def _str(record, name, path, where) -> str:
    return field(record, name, str, path, where)


def _list(record, name, path, where) -> list:
    return field(record, name, list, path, where)


def _strings(record, name, path, where) -> list[str]:
    """An optional field holding a list of strings ([] when absent or null): a string there would be
    split into its characters, a number turned into text."""
    value = record.get(name) if isinstance(record, dict) else None
    if value is None:
        return []
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        found = type(value).__name__ if not isinstance(value, list) else "a list holding " + ", ".join(
            sorted({type(v).__name__ for v in value if not isinstance(v, str)}))
        raise DataError(path, where, f"field '{name}' should be a list of strings, found {found}")
    return value


def _optional(record, name, kind: type, default, path, where):
    """An optional field of type `kind` (`default` when absent or null)."""
    value = record.get(name) if isinstance(record, dict) else None
    return default if value is None else field(record, name, kind, path, where)


def _titled_sentences(record, path, where) -> list[Passage]:
    """HotpotQA/2Wiki `context`: [[title, [sentence, ...]], ...]."""
    passages = []
    for i, item in enumerate(_list(record, "context", path, where)):
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], list)):
            raise DataError(path, where, f"field 'context' item {i} should be [title, [sentences]]")
        passages.append(Passage.make(item[0], sentences=[str(s) for s in item[1]]))
    return passages


def _supporting_titles(record, context: list[Passage], path, where) -> list[tuple[str, str | None]]:
    by_title = {p.title: p for p in context}
    gold: list[tuple[str, str | None]] = []
    for i, fact in enumerate(_list(record, "supporting_facts", path, where)):
        if not (isinstance(fact, list) and fact and isinstance(fact[0], str)):
            raise DataError(path, where, f"field 'supporting_facts' item {i} should be [title, sentence index]")
        title = normalize_space(fact[0])
        if title not in by_title:
            raise DataError(path, where, f"supporting fact title '{title}' is not in the question's context")
        if all(title != g[0] for g in gold):
            gold.append((title, by_title[title].text))
    return gold


def read_hotpotqa(record, path: Path, where: str) -> _Parsed:
    context = _titled_sentences(record, path, where)
    question = Question(
        id=_str(record, "_id", path, where),
        question=_str(record, "question", path, where),
        answers=[_str(record, "answer", path, where)],
        type=str(record.get("type", "")),
    )
    return _Parsed(question, where, context, _supporting_titles(record, context, path, where))


def read_2wiki(record, path: Path, where: str) -> _Parsed:
    parsed = read_hotpotqa(record, path, where)
    triples = record.get("evidences", [])
    if not all(isinstance(t, list) and len(t) == 3 for t in triples):
        raise DataError(path, where, "field 'evidences' should be a list of [subject, relation, object]")
    parsed.question.gold_triples = [[str(x) for x in t] for t in triples]
    return parsed


def read_musique(record, path: Path, where: str) -> _Parsed:
    qid = _str(record, "id", path, where)
    context, gold_by_idx = [], {}
    for i, para in enumerate(_list(record, "paragraphs", path, where)):
        at = f"{where}, paragraph {i}"
        passage = Passage.make(_str(para, "title", path, at), _str(para, "paragraph_text", path, at))
        context.append(passage)
        if para.get("is_supporting"):
            gold_by_idx[para.get("idx", i)] = passage
    decomposition = []
    order = []  # gold paragraphs in hop order, as the decomposition gives it
    for step in record.get("question_decomposition", []):
        decomposition.append({"question": str(step.get("question", "")), "answer": str(step.get("answer", ""))})
        idx = step.get("paragraph_support_idx")
        if idx in gold_by_idx and idx not in order:
            order.append(idx)
    order += [i for i in gold_by_idx if i not in order]
    question = Question(
        id=qid,
        question=_str(record, "question", path, where),
        answers=[_str(record, "answer", path, where)] + _strings(record, "answer_aliases", path, where),
        type=qid.split("__")[0] if "__" in qid else "",
        decomposition=decomposition,
    )
    return _Parsed(question, where, context, [(gold_by_idx[i].title, gold_by_idx[i].text) for i in order])


def read_ircot(record, path: Path, where: str) -> _Parsed:
    answers = []
    for i, obj in enumerate(_list(record, "answers_objects", path, where)):
        answers += _strings(obj, "spans", path, f"{where}, answers_objects[{i}]")
    context, gold = [], []
    for i, ctx in enumerate(_list(record, "contexts", path, where)):
        at = f"{where}, context {i}"
        passage = Passage.make(_str(ctx, "title", path, at), _str(ctx, "paragraph_text", path, at))
        context.append(passage)
        if ctx.get("is_supporting"):
            gold.append((passage.title, passage.text))
    question = Question(
        id=_str(record, "question_id", path, where),
        question=_str(record, "question_text", path, where),
        answers=answers,
        type=str(record.get("type", "")),
    )
    return _Parsed(question, where, context, gold)


def read_plain(record, path: Path, where: str) -> _Parsed:
    """A question string, or an object with `question` and optional `answer`/`ground_truth` titles."""
    text = record if isinstance(record, str) else _str(record, "question", path, where)
    answer = _optional(record, "answer", str, None, path, where)
    titles = _strings(record, "ground_truth", path, where)
    question = Question(
        id=str(record.get("id")) if isinstance(record, dict) and "id" in record else _text_id(text),
        question=text,
        answers=[answer] if answer else [],
    )
    return _Parsed(question, where, gold=[(normalize_space(t), None) for t in titles])


_QUESTION_FIELDS = [f.name for f in dc_fields(Question)]


def read_unified(record, path: Path, where: str) -> _Parsed:
    """The project's own format: a `Question` as a dict (what `prepare.py data` writes)."""
    if isinstance(record, dict) and (unknown := [k for k in record if k not in _QUESTION_FIELDS]):
        # a misspelt optional field (`gold_ids`) would otherwise leave the question without gold passages
        raise DataError(path, where, f"unknown field {unknown[0]!r}; a unified question has "
                                     f"{', '.join(_QUESTION_FIELDS)}")
    triples = _optional(record, "gold_triples", list, [], path, where)
    if not all(isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) for x in t) for t in triples):
        raise DataError(path, where, "field 'gold_triples' should be a list of [head, relation, tail] strings")
    steps = _optional(record, "decomposition", list, [], path, where)
    if not all(isinstance(step, dict) for step in steps):
        raise DataError(path, where, "field 'decomposition' should be a list of {question, answer} objects")
    question = Question(
        id=_str(record, "id", path, where),
        question=_str(record, "question", path, where),
        answers=_strings(record, "answers", path, where),
        gold_passage_ids=_strings(record, "gold_passage_ids", path, where),
        type=_optional(record, "type", str, "", path, where),
        gold_triples=triples,
        decomposition=steps,
    )
    return _Parsed(question, where)


def _text_id(text: str) -> str:
    return hashlib.sha1(normalize_space(text).encode("utf-8")).hexdigest()[:12]


def _sniff(record) -> str:
    """Which published format a question record is in (for the `hipporag` layout)."""
    if isinstance(record, str) or (isinstance(record, dict) and "context" not in record and "question" in record
                                   and "paragraphs" not in record and "gold_passage_ids" not in record):
        return "plain"
    if isinstance(record, dict):
        if "paragraphs" in record:
            return "musique"
        if "question_text" in record:
            return "ircot"
        if "gold_passage_ids" in record:
            return "unified"
        if "context" in record:
            return "2wiki" if "evidences" in record else "hotpotqa"
    return "unknown"


READERS: dict[str, Reader] = {
    "hotpotqa": read_hotpotqa,
    "2wiki": read_2wiki,
    "musique": read_musique,
    "ircot": read_ircot,
    "plain": read_plain,
    "unified": read_unified,
}


def load_corpus(path: str | Path) -> list[Passage]:
    """A corpus file: HotpotQA's {title: [sentences]}, HippoRAG's [{title, text}], or unified passages."""
    value, unit = read_json(path)
    if isinstance(value, dict):
        items = []
        for title, body in value.items():
            where = f"title '{title}'"
            if isinstance(body, list):
                items.append((where, Passage.make(title, sentences=[str(s) for s in body])))
            elif isinstance(body, str):
                items.append((where, Passage.make(title, body)))
            else:
                raise DataError(path, where, "expected a list of sentences or a text")
        return _dedup(items, path)
    passages = []
    for where, record in read_records(path):
        title, text = _str(record, "title", path, where), _str(record, "text", path, where)
        passage = Passage.make(title, text, sentences=_strings(record, "sentences", path, where))
        if "id" in record:
            passage.id = str(record["id"])
        passages.append((where, passage))
    return _dedup(passages, path)


def _dedup(passages: list[tuple[str, Passage]], path: str | Path) -> list[Passage]:
    """Each passage once; one id for two different passages is an error naming both records."""
    seen: dict[str, tuple[str, Passage]] = {}
    for where, p in passages:
        first = seen.setdefault(p.id, (where, p))
        if (first[1].title, first[1].text) != (p.title, p.text):
            raise DataError(path, where, f"passage id {p.id!r} is also the id of a different passage ({first[0]})")
    return [p for _, p in seen.values()]


def load_gold_titles(path: str | Path) -> dict[str, list[str]]:
    """A list of {question, ground_truth: [titles]}: gold titles for a plain question list."""
    gold = {}
    for where, record in read_records(path):
        field(record, "ground_truth", list, path, where)  # required
        titles = _strings(record, "ground_truth", path, where)
        gold[normalize_space(_str(record, "question", path, where))] = [normalize_space(t) for t in titles]
    return gold


def load_benchmark(
    format: str,
    questions: str | Path,
    corpus: str | Path | None = None,
    gold_titles: str | Path | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> Benchmark:
    """Load questions of `format` (`limit` of them from `offset`), their corpus, and resolve their gold
    passages to corpus ids."""
    if format not in FORMATS:
        raise DataError(questions, None, f"unknown format '{format}'; known formats: {', '.join(FORMATS)}")
    if offset < 0 or limit is not None and limit < 1:
        raise ValueError(f"offset must be at least 0 and limit at least 1, got {offset} and {limit}")
    records = read_records(questions)[offset:]
    if limit is not None:
        records = records[:limit]
    if not records:
        raise DataError(questions, None, "no questions" + (f" from offset {offset}" if offset else ""))
    if format == "hipporag":
        format = _sniff(records[0][1])
        if format not in READERS:
            raise DataError(questions, records[0][0], "cannot tell which published format this file is in")
    parsed = [READERS[format](record, Path(questions), where) for where, record in records]
    for item in parsed:
        if not item.question.question.strip():
            raise DataError(questions, item.where, f"question {item.question.id!r} has an empty question text")
    _check_unique_ids(parsed, questions)

    if corpus is None and format == "unified":
        corpus = corpus_file(format, questions, corpus)
        if not corpus.is_file():
            raise DataError(questions, None, f"unified questions carry no contexts and there is no {corpus}: "
                                             "name the corpus with --data.corpus")
    passages = load_corpus(corpus) if corpus else _dedup([(q.where, p) for q in parsed for p in q.context], questions)
    if not passages and corpus is None:
        sniffed = _sniff(records[0][1])
        hint = (f"; its records look like {sniffed} questions: --data.format {sniffed}?"
                if sniffed not in (format, "plain", "unknown") else "")
        raise DataError(questions, None, f"{format} questions carry no passages, and no corpus was given: name it "
                                         f"with --data.corpus{hint}")
    if not passages:
        raise DataError(corpus, None, "the corpus is empty")
    titles = {} if gold_titles is None else load_gold_titles(gold_titles)
    _resolve_gold(parsed, passages, titles, questions, corpus)
    return Benchmark([p.question for p in parsed], passages)


def _check_unique_ids(parsed: list[_Parsed], path: str | Path) -> None:
    """One record per question id: a repeated id would score one question against another's ranking."""
    first: dict[str, str] = {}
    for item in parsed:
        where = first.setdefault(item.question.id, item.where)
        if where != item.where:
            raise DataError(path, item.where, f"question id {item.question.id!r} already appears at {where}")


def _resolve_gold(parsed: list[_Parsed], passages: list[Passage], gold_titles: dict[str, list[str]],
                  questions_path, corpus_path) -> None:
    ids = {p.id for p in passages}
    by_title: dict[str, list[str]] = defaultdict(list)
    for p in passages:
        by_title[p.title].append(p.id)
    corpus_name = corpus_path or f"{questions_path} (contexts)"
    for item in parsed:
        question = item.question
        gold = item.gold or [(t, None) for t in gold_titles.get(normalize_space(question.question), [])]
        for title, text in gold:
            pid = passage_id(title, text) if text is not None else None
            if pid not in ids:
                candidates = by_title.get(title, [])
                if len(candidates) != 1:
                    problem = "is not in the corpus" if not candidates else f"matches {len(candidates)} passages by title"
                    raise DataError(questions_path, item.where,
                                    f"gold passage '{title}' of question {question.id} {problem} ({corpus_name})")
                pid = candidates[0]
            if pid not in question.gold_passage_ids:
                question.gold_passage_ids.append(pid)
        unknown = [pid for pid in question.gold_passage_ids if pid not in ids]
        if unknown:
            raise DataError(questions_path, item.where,
                            f"gold passage id(s) {', '.join(unknown)} of question {question.id} not in the corpus ({corpus_name})")


def write_unified(benchmark: Benchmark, output_dir: str | Path) -> Path:
    """Write `questions.jsonl` and `passages.jsonl` (read back with `--data.format unified`)."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("questions", benchmark.questions), ("passages", benchmark.passages)):
        Dataset.from_list([r.to_dict() for r in rows]).to_json(out / f"{name}.jsonl", lines=True, force_ascii=False)
    return out


def convert_to_unified(config: DataConfig, output_dir: str | Path, overwrite: bool = False) -> Benchmark:
    """`prepare.py data`: the benchmark of `config` written in the unified format into `output_dir`.

    The folder keeps the settings that made it (`data.json`); other settings, or a folder holding
    other files, are refused unless `overwrite`.
    """
    benchmark = config.load()
    with exclusive_output(output_dir, is_folder=True) as out:
        record = out / "data.json"
        check_settings(record, asdict(config), out, overwrite)
        write_unified(benchmark, out)
        write_atomic(record, json.dumps(asdict(config), indent=2) + "\n")
    return benchmark
