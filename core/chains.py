"""Reasoning chains: the contract between the Aligner's training and KiRAG's inference.

- `aligner_query`: the query text for a chain prefix;
- `candidate_triples`: the candidates that may extend a chain (the negatives at training time, the
  triples the Aligner scores at inference);
- `ChainRecord` and `chains.jsonl`: a chain with its mined negatives, the Aligner's training data.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from core.records import DataError, field, read_records
from core.types import Triple, triple_id


def aligner_query(question: str, chain: Sequence[str]) -> str:
    """The Aligner's query: the question, then the triple texts of the chain so far.

    `question` alone at the first hop, else `"{question}\\nknowledge triples: {t1}. {t2}."`.
    Training and inference must both build queries here: the authors' inference sent
    `knowledge triples: .` at the first hop, a format training never saw.
    """
    if not chain:
        return question
    return f"{question}\nknowledge triples: " + " ".join(f"{triple}." for triple in chain)


def candidate_triples(triples: Iterable[Triple], chain: Sequence[Triple]) -> list[Triple]:
    """KiRAG's candidate set for extending `chain`: the distinct facts among `triples` (by id, the
    first instance of each, in input order), without the chain's own facts.

    A chain triple is never a wrong answer (for comparison questions it is a right one), and the
    same fact stated by another passage is the same candidate.
    """
    in_chain = {t.id for t in chain}
    first: dict[str, Triple] = {}
    for t in triples:
        if t.id not in in_chain:
            first.setdefault(t.id, t)
    return list(first.values())


@dataclass(frozen=True)
class ChainRecord:
    question_id: str
    question: str
    type: str
    ordered: bool  # False: any order of the chain is valid (comparison questions)
    complete: bool  # the chain reaches the answer
    chain: tuple[Triple, ...]
    negatives: tuple[tuple[Triple, ...], ...]  # negatives[i]: candidates mined for predicting chain[i]

    def to_dict(self) -> dict[str, Any]:
        record = asdict(self)
        record["chain"] = list(record["chain"])
        record["negatives"] = [list(hop) for hop in record["negatives"]]
        return record


def _triple(value: Any, path: str | Path, where: str) -> Triple:
    head, relation, tail = (field(value, name, str, path, where) for name in ("head", "relation", "tail"))
    identifier = value.get("id", triple_id(head, relation, tail))
    if not isinstance(identifier, str):
        raise DataError(path, where, f"field 'id' should be str, found {type(identifier).__name__}")
    index = value.get("sentence_index", -1)
    if not isinstance(index, int) or isinstance(index, bool):
        raise DataError(path, where, f"field 'sentence_index' should be int, found {type(index).__name__}")
    return Triple(identifier, head, relation, tail, field(value, "passage_id", str, path, where), index)


def _triples(values: list, path: str | Path, where: str) -> tuple[Triple, ...]:
    return tuple(_triple(v, path, f"{where}[{i}]") for i, v in enumerate(values))


def read_chains(path: str | Path) -> list[ChainRecord]:
    """Read `chains.jsonl`; bad input raises a `DataError` naming the file, the line and the field.

    A triple's `id` defaults to the hash of its text and `sentence_index` to -1.
    """
    chains: list[ChainRecord] = []
    seen: dict[str, str] = {}
    for where, record in read_records(path):
        question_id = field(record, "question_id", str, path, where)
        if question_id in seen:
            raise DataError(path, where, f"question_id {question_id!r} already appears at {seen[question_id]}")
        seen[question_id] = where
        chain = _triples(field(record, "chain", list, path, where), path, f"{where}, chain")
        negatives = field(record, "negatives", list, path, where)
        if len(negatives) != len(chain):
            raise DataError(path, where, f"field 'negatives' should hold one list per chain triple "
                                         f"({len(chain)}), found {len(negatives)}")
        for i, hop in enumerate(negatives):
            if not isinstance(hop, list):
                raise DataError(path, where, f"field 'negatives[{i}]' should be list, found {type(hop).__name__}")
        chains.append(ChainRecord(
            question_id=question_id,
            question=field(record, "question", str, path, where),
            type=field(record, "type", str, path, where),
            ordered=field(record, "ordered", bool, path, where),
            complete=field(record, "complete", bool, path, where),
            chain=chain,
            negatives=tuple(_triples(hop, path, f"{where}, negatives[{i}]") for i, hop in enumerate(negatives)),
        ))
    return chains


def write_chains(path: str | Path, chains: Sequence[ChainRecord]) -> None:
    """Write `chains.jsonl`, one record per line: the format `read_chains` reads."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for record in chains:
            f.write(json.dumps(record.to_dict(), ensure_ascii=False) + "\n")
