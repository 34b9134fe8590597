"""Text utilities shared by every stage: whitespace, sentences, SQuAD tokens, stems, ONE stopword list,
token F1 and the answer scores.

SQuAD normalisation (lowercase, no punctuation, no articles) is written once here: the answer
metrics, the silver-chain matcher, the Constructor's candidate matching and the trace labels all
use it. `answer_scores` agrees with torchmetrics' SQuAD metric (a test checks it on random text).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import Stemmer
from bm25s.stopwords import STOPWORDS_EN

_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_WORD = re.compile(r"\w+")
_STEMMER = Stemmer.Stemmer("english")

STOPWORDS = frozenset(STOPWORDS_EN) | frozenset(
    "from has have its who whom whose what which when where why how did does do were".split()
)
"""Function words: Lucene's English list (what BM25 drops) plus question words and a few auxiliaries."""


def normalize_space(text: str) -> str:
    """Collapse runs of whitespace so that ids and matches ignore layout."""
    return _SPACE.sub(" ", text).strip()


def split_sentences(text: str) -> list[str]:
    """A light rule-based sentence splitter, used when a format gives no sentences."""
    return [s for s in (p.strip() for p in _SENTENCE_END.split(text)) if s]


@lru_cache(maxsize=1 << 16)
def tokens(text: str) -> tuple[str, ...]:
    """SQuAD normalisation (lowercase, no punctuation or articles), split into words."""
    return tuple(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


@lru_cache(maxsize=1 << 16)
def stems(text: str) -> tuple[str, ...]:
    """Stemmed tokens without stopwords."""
    return tuple(_STEMMER.stemWords([w for w in tokens(text) if w not in STOPWORDS]))


def content_words(text: str) -> frozenset[str]:
    return frozenset(stems(text))


def is_content(word: str) -> bool:
    """A real word: it has a letter or digit and is not a stopword."""
    w = word.strip().lower()
    return any(c.isalnum() for c in w) and w not in STOPWORDS


def overlap_f1(a: Sequence[str], b: Sequence[str]) -> float:
    """F1 of the multiset overlap of two token sequences (0 when they share nothing)."""
    common = sum((Counter(a) & Counter(b)).values())
    return 0.0 if common == 0 else 2 * common / (len(a) + len(b))


def token_f1(a: str, b: str) -> float:
    """SQuAD token F1 of two texts."""
    return overlap_f1(tokens(a), tokens(b))


def stem_f1(a: str, b: str) -> float:
    """F1 of stemmed content words: lets "directed" meet "direct", "located" meet "location"."""
    return overlap_f1(stems(a), stems(b))


def contains_words(text: str, part: str) -> bool:
    """`part` appears in `text` as a whole-word sequence (after normalisation)."""
    needle = " ".join(tokens(part))
    return bool(needle) and f" {needle} " in f" {' '.join(tokens(text))} "


def answer_scores(prediction: str, answers: Sequence[str]) -> dict[str, float]:
    """SQuAD exact match and token F1 of one prediction, maximised over the answers, in [0, 1].

    As in SQuAD, an empty prediction or answer (after normalisation) scores F1 1 only against another empty one.
    """
    if not answers:
        raise ValueError("cannot score an answer without gold answers")
    predicted = tokens(prediction)
    em = f1 = 0.0
    for answer in answers:
        gold = tokens(answer)
        em = max(em, float(predicted == gold))
        f1 = max(f1, float(predicted == gold) if not predicted or not gold else overlap_f1(predicted, gold))
    return {"em": em, "f1": f1}


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - STOPWORDS


def sentence_index(parts: tuple[str, str, str], sentences: Sequence[str]) -> int:
    """Index of the sentence sharing the most words with a triple's parts (stopwords aside; first on ties).

    Words of the relation and tail count first and the head's only break ties: the head is often
    the passage's subject, named in several sentences, while the tail is the specific fact.
    """
    if not sentences:
        return -1
    head, rest = _words(parts[0]), _words(parts[1] + " " + parts[2])
    scores = [(len(rest & words), len(head & words)) for words in map(_words, sentences)]
    return scores.index(max(scores))
