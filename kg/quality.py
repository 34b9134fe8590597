"""How good a set of extracted triples is against a reference set (say gpt-3.5's) for the same passages."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from core.text import token_f1
from core.types import Triple

MATCH_F1 = 0.5  # two triples match when the token F1 of "head relation tail" reaches this


def precision_recall(ours: dict[str, Sequence[Triple]], reference: dict[str, Sequence[Triple]],
                     passage_ids: Iterable[str]) -> tuple[float, float]:
    """Precision and recall of `ours` against `reference`, passage by passage: each of our triples is
    matched to the unmatched reference triple of best token F1, when that F1 reaches `MATCH_F1`."""
    matched = n_ours = n_reference = 0
    for pid in passage_ids:
        mine, free = [t.plain_text for t in ours.get(pid, [])], [t.plain_text for t in reference.get(pid, [])]
        n_ours, n_reference = n_ours + len(mine), n_reference + len(free)
        for text in mine:
            scores = [token_f1(text, ref) for ref in free]
            best = max(range(len(free)), key=scores.__getitem__, default=None)
            if best is not None and scores[best] >= MATCH_F1:
                free.pop(best)
                matched += 1
    return matched / max(n_ours, 1), matched / max(n_reference, 1)


def identical_share(a: dict[str, Sequence[Triple]], b: dict[str, Sequence[Triple]], passage_ids: Iterable[str]) -> float:
    """The share of the triples of `a` and `b` together that both extracted (the same fact, by id)."""
    same = total = 0
    for pid in passage_ids:
        ids_a, ids_b = {t.id for t in a.get(pid, [])}, {t.id for t in b.get(pid, [])}
        same, total = same + len(ids_a & ids_b), total + len(ids_a | ids_b)
    return same / max(total, 1)
