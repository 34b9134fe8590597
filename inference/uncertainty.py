"""MIND's uncertainty signals at word level: the RIND trigger and the entity confidence.

`models.lm.CausalLM.generate(..., return_signals=True)` gives, per generated token, the entropy of
the raw next-token distribution that produced it and the largest attention it receives from a
later token. Here tokens are grouped into words (a word made of several sub-tokens takes the mean
entropy and the summed attention of its sub-tokens, as in DRAGIN's RIND), stopwords and
punctuation get s = 0, and:

- RIND score S(w) = H(w) · maxAttn(w) · s(w); retrieval triggers when max S > θ, with MIND's dynamic
  θ = α·mean(H) + β·mean(maxAttn) (means over every word of the sentence), or a fixed θ
  (DRAGIN-style). s is applied before the decision, so a stopword can never trigger.
- conf(e) = max over e's tokens of γ/(1+H) + δ·maxAttn (MIND eq. 4).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from bm25s.stopwords import STOPWORDS_EN
from torch import Tensor

STOPWORDS = frozenset(STOPWORDS_EN)


def is_content(word: str) -> bool:
    """A real word: it has a letter or digit and is not an English stopword."""
    w = word.strip().lower()
    return any(c.isalnum() for c in w) and w not in STOPWORDS


@dataclass
class WordSignals:
    words: list[str]
    spans: list[tuple[int, int]]  # token range [start, end) of each word
    entropy: Tensor  # mean over the word's tokens
    max_attention: Tensor  # sum over the word's tokens
    content: Tensor  # s: 1.0 for a real word, 0.0 for a stopword or punctuation


def group_words(pieces: Sequence[str]) -> list[tuple[int, int]]:
    """Token ranges of words, from each token's decoded text: a word starts at a piece that begins
    with whitespace, and punctuation pieces stand alone. Pieces of whitespace only join no word."""
    spans: list[list[int]] = []
    previous_ends_alnum = False
    for i, piece in enumerate(pieces):
        text = piece.strip()
        if not text:
            previous_ends_alnum = False
            continue
        if spans and previous_ends_alnum and not piece[0].isspace() and text[0].isalnum():
            spans[-1][1] = i + 1  # a sub-token continuing the word
        else:
            spans.append([i, i + 1])
        previous_ends_alnum = text[-1].isalnum()
    return [(s, e) for s, e in spans]


def word_signals(pieces: Sequence[str], entropy: Tensor, max_attention: Tensor) -> WordSignals:
    """Aggregate per-token signals (aligned with `pieces`, each token's decoded text) into words."""
    spans = group_words(pieces)
    words = ["".join(pieces[s:e]).strip() for s, e in spans]
    h = torch.stack([entropy[s:e].float().mean() for s, e in spans]) if spans else torch.zeros(0)
    a = torch.stack([max_attention[s:e].float().sum() for s, e in spans]) if spans else torch.zeros(0)
    s = torch.tensor([1.0 if is_content(w) else 0.0 for w in words])
    return WordSignals(words, spans, h, a, s)


def rind_scores(signals: WordSignals) -> Tensor:
    return signals.entropy * signals.max_attention * signals.content


@dataclass
class TriggerDecision:
    retrieve: bool
    max_score: float
    threshold: float
    word: str | None  # the word of highest score


def decide(signals: WordSignals, alpha: float = 1.0, beta: float = 1.0, fixed: float | None = None) -> TriggerDecision:
    """Retrieve when max S > θ: θ = `fixed` when given (DRAGIN), else α·mean(H) + β·mean(maxAttn) (MIND)."""
    if len(signals.words) == 0:
        return TriggerDecision(False, 0.0, math.inf if fixed is None else fixed, None)
    scores = rind_scores(signals)
    best = int(scores.argmax())
    if fixed is not None:
        threshold = fixed
    else:
        threshold = float(alpha * signals.entropy.mean() + beta * signals.max_attention.mean())
    return TriggerDecision(bool(scores[best] > threshold), float(scores[best]), threshold, signals.words[best])


def entity_confidence(entropy: Tensor, max_attention: Tensor, gamma: float = 1.0, delta: float = 0.2) -> float:
    """conf(e) over the entity's tokens; an entity with no tokens has confidence 0."""
    if entropy.numel() == 0:
        return 0.0
    return float((gamma / (1.0 + entropy.float()) + delta * max_attention.float()).max())
