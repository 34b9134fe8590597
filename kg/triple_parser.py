"""Parsing `<head; relation; tail>` triples out of LM output (extraction and the Constructor)."""

from __future__ import annotations

import re

from core.text import normalize_space
from core.types import triple_key

_ANGLED = re.compile(r"<([^<>]*)>")
_LIST_MARK = re.compile(r"^\s*(?:\d+[.)]|[-*\u2022])\s+")
_PAIRS = {'"': '"', "'": "'", "`": "`", "\u201c": "\u201d", "\u2018": "\u2019", "(": ")", "[": "]", "{": "}"}
_LOOSE_QUOTES = "\"`\u201c\u201d"  # quotes stripped from a part's ends even when unpaired

Parts = tuple[str, str, str]


def _clean_part(part: str) -> str:
    """Strip whitespace, enclosing quote/bracket pairs, and stray double quotes at the ends."""
    part = normalize_space(part)
    while True:
        before = part
        if len(part) >= 2 and _PAIRS.get(part[0]) == part[-1]:
            part = part[1:-1].strip()
        part = part.strip(_LOOSE_QUOTES).strip()
        if part == before:
            return part


def _unwrap(parts: list[str]) -> list[str]:
    """Remove a quote/bracket pair around the whole triple, as in `<'a; b; c'>` or `<(a; b; c)>`."""
    first, last = parts[0], parts[-1]
    close = _PAIRS.get(first[:1])
    if len(parts) > 1 and close and last.endswith(close) and close not in first[1:] and first[0] not in last[:-1]:
        return [first[1:], *parts[1:-1], last[:-1]]
    return parts


def _bare_triples(output: str) -> list[str]:
    """The lines that may be triples written without angle brackets, list markers removed."""
    return [_LIST_MARK.sub("", line) for line in output.splitlines() if line.count(";") >= 2]


def parse_triples(output: str) -> tuple[list[Parts], int]:
    """Parse every `<head; relation; tail>` in an LM output.

    Returns the well-formed triples (three non-empty parts, deduplicated by their normalised
    text, in order of appearance) and the number of candidates rejected. Text outside the angle
    brackets (numbering, bullets, commentary) is ignored. An output with no `<...>` at all is read
    line by line instead, every line with two or more semicolons a candidate: the packaged 0.5B LM
    sometimes drops the brackets of its demonstrations and writes `h; r; t` or `"h; r; t"`, which
    left passages without triples. Never raises.
    """
    output = output if isinstance(output, str) else ""
    candidates = [m.group(1) for m in _ANGLED.finditer(output)] or _bare_triples(output)
    triples: list[Parts] = []
    seen: set[str] = set()
    rejected = 0
    for candidate in candidates:
        parts = [_clean_part(p) for p in _unwrap([p.strip() for p in candidate.split(";")])]
        if len(parts) != 3 or not all(parts):
            rejected += 1
            continue
        key = triple_key(*parts)
        if key not in seen:
            seen.add(key)
            triples.append((parts[0], parts[1], parts[2]))
    return triples, rejected
