"""Build the demo dataset from its source, `datamodules/demo/world.yaml`: the invented world of `make demo`
and of the tests (passages with their knowledge triples, and questions as hops over them).

    python -m scripts.build_demo

It writes beside the world file, where the package ships them, `passages.jsonl`, `questions.jsonl` and the
world's knowledge graph as the KG store `kg/` (source "manual"; the folder is deleted and rewritten), all
deterministically. With that KG in place, chains are built without running an LLM over the corpus
(`prepare.py kg` still can). `tests/test_demo_world.py` checks the world (every gold passage exists, each
hop continues from the one before, spans occur in their passages, ...) and that the committed files are
what this writes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from core.records import DataError, field, read_text
from core.types import Passage, Question, Triple
from datamodules.loaders import DEMO_DIR
from kg.store import Entry, KGStore

WORLD = DEMO_DIR / "world.yaml"
KG_SOURCE = "manual"
FILES = ("passages.jsonl", "questions.jsonl", "kg/triples.jsonl")  # what `build` writes, under its folder


def read_world(path: str | Path = WORLD) -> dict[str, Any]:
    """The world file, each field checked for its kind: a value YAML reads as something other than text
    (an unquoted 1903 or no) is an error that names the record."""
    try:
        world = yaml.safe_load(read_text(path))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise DataError(path, f"line {mark.line + 1}" if mark else None,
                        f"malformed YAML: {getattr(error, 'problem', None) or error}") from None
    for name in ("passages", "questions"):
        field(world, name, list, path, "the top level")
    for i, spec in enumerate(world["passages"], start=1):
        where = f"passage {i} ({field(spec, 'title', str, path, f'passage {i}')!r})"
        _strings(field(spec, "sentences", list, path, where), path, f"{where}, sentences")
        for k, triple in enumerate(field(spec, "triples", list, path, where), start=1):
            _strings(triple, path, f"{where}, triple {k}", count=3)
    for i, spec in enumerate(world["questions"], start=1):
        where = f"question {field(spec, 'id', str, path, f'question {i}')}"
        field(spec, "type", str, path, where)
        field(spec, "question", str, path, where)
        _strings(field(spec, "answers", list, path, where), path, f"{where}, answers")
        for k, hop in enumerate(field(spec, "hops", list, path, where), start=1):
            field(hop, "passage", str, path, f"{where}, hop {k}")
            field(hop, "question", str, path, f"{where}, hop {k}")
            _strings(field(hop, "triple", list, path, f"{where}, hop {k}"), path, f"{where}, hop {k} triple", count=3)
    return world


def _strings(values: Any, path: str | Path, where: str, count: int | None = None) -> None:
    """`values` is a list of strings (of `count` of them when given)."""
    if not isinstance(values, list) or (count is not None and len(values) != count):
        raise DataError(path, where, f"should be a list of {count or 'some'} strings, found {values!r}")
    for value in values:
        if not isinstance(value, str):
            raise DataError(path, where, f"{value!r} is read as {type(value).__name__}, not text: quote it")


def build_passages(world: dict[str, Any]) -> list[Passage]:
    return [Passage.make(spec["title"], sentences=spec["sentences"]) for spec in world["passages"]]


def build_questions(world: dict[str, Any], passages: list[Passage], path: str | Path = WORLD) -> list[Question]:
    """Each question's gold passages, triples and sub-questions from its hops; the sub-answer is the
    hop triple's tail."""
    by_title = {p.title: p for p in passages}
    questions = []
    for spec in world["questions"]:
        hops = spec["hops"]
        for k, hop in enumerate(hops, start=1):
            if hop["passage"] not in by_title:
                raise DataError(path, f"question {spec['id']}, hop {k}", f"no passage titled {hop['passage']!r}")
        questions.append(Question(
            id=spec["id"],
            question=spec["question"],
            answers=list(spec["answers"]),
            gold_passage_ids=[by_title[hop["passage"]].id for hop in hops],
            type=spec["type"],
            gold_triples=[list(hop["triple"]) for hop in hops],
            decomposition=[{"question": hop["question"], "answer": hop["triple"][2]} for hop in hops],
        ))
    return questions


def build_kg(world: dict[str, Any], passages: list[Passage]) -> list[Entry]:
    """The KG store's entries: passages in corpus order, each passage's triples in written order."""
    return [(p.id, [Triple.make(*triple, p.id, p.sentences) for triple in spec["triples"]], 0)
            for p, spec in zip(passages, world["passages"], strict=True)]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=True) + "\n")


def build(world_path: str | Path = WORLD, folder: str | Path = DEMO_DIR) -> dict[str, int]:
    """Write the demo files (`FILES`) built from the world file into `folder`; return what they hold."""
    world = read_world(world_path)
    passages = build_passages(world)
    questions = build_questions(world, passages, world_path)
    entries = build_kg(world, passages)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / "passages.jsonl", [p.to_dict() for p in passages])
    write_jsonl(folder / "questions.jsonl", [q.to_dict() for q in questions])
    shutil.rmtree(folder / "kg", ignore_errors=True)
    KGStore(folder / "kg").add_many(entries, source=KG_SOURCE)
    return {"passages": len(passages), "questions": len(questions),
            "triples": sum(len(triples) for _, triples, _ in entries)}


if __name__ == "__main__":
    stats = build()
    print(f"wrote {', '.join(FILES)} in {DEMO_DIR}")
    print(json.dumps(stats))
