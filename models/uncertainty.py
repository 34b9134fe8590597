"""MIND's uncertainty formulas, each written once: the RIND trigger and the entity confidence, in the
hard form the MIND loop decides with and the relaxed form the `TriggerCalibrator` learns with, and
their parameters (`MindParams`), saved and loaded here.

`models.lm.transformers_backend.CausalLM.generate(..., return_signals=True)` gives, per generated
token, the entropy of the raw next-token distribution that produced it and the largest attention it
receives from a later token. `word_signals` groups tokens into words (a word made of several
sub-tokens takes the mean entropy and the summed attention of its sub-tokens, as in DRAGIN's RIND);
stopwords and punctuation get s = 0. Then:

- RIND score S(w) = H(w) · maxAttn(w) · s(w); retrieval triggers when max S > θ, with MIND's dynamic
  θ = α·mean(H) + β·mean(maxAttn) (means over every word of the sentence), or a fixed θ
  (DRAGIN-style). s is applied before the decision, so a stopword can never trigger.
- conf(e) = max over e's tokens of γ/(1+H) + δ·maxAttn (MIND eq. 4); an entity is kept when
  conf(e) ≥ the threshold (or when it is among the top k, without a threshold).

The scale of each signal, which every threshold and parameter value depends on:

- H: nats, in [0, ln V] (V the LM's logits: ln 151,936 ≈ 11.9 for Qwen2.5); 1/(1+H) is in (0, 1].
  Measured with the packaged 0.5B LM: a sentence's mean H is 0.16-1.8.
- maxAttn, `raw` (`MindParams.attention`): a head-averaged last-layer weight over prompt + text,
  about 1/length per key; measured mean per word 0.017-0.043, and max S over a sentence
  0.003-0.26, so θ = mean(H) + mean(maxAttn) (α = β = 1) is above max S almost always.
- maxAttn, `sentence`: the weights of each generated query renormalised over the generated
  tokens (DRAGIN's way), in [0, 1] per token whatever the prompt's length.
- A word sums its tokens' attention, so it can exceed 1 with either kind; a token's cannot, so
  conf ≤ γ + δ.

Values calibrated on one kind of attention mean nothing on the other: `MindParams.attention`
records the kind, and MIND refuses parameters of another kind.

The formulas take padded (rows, width) tensors with a mask of real values: a sentence's words, or
an entity's tokens. The relaxed forms are the hard comparisons through a sigmoid at temperature T:
P(retrieve) = σ((max S − θ) / T) and P(keep) = σ((conf − threshold) / T).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import get_args

import torch
from torch import Tensor

from core.config import ConfigError, require_finite
from core.records import DataError, read_json
from core.text import is_content
from models.lm.interface import Attention

ATTENTION_KINDS = get_args(Attention)


@dataclass
class MindParams:
    """α, β of the trigger; γ, δ of the entity confidence and its keep threshold (None: keep the top k);
    the attention they were calibrated on (None: hand-set, for any).

    The defaults are the hand-set values: α = β = 1, and MIND's best reported γ = 1.0, δ = 0.2.
    """

    alpha: float = 1.0
    beta: float = 1.0
    gamma: float = 1.0
    delta: float = 0.2
    threshold: float | None = None
    attention: Attention | None = None

    def __post_init__(self) -> None:
        require_finite(self)  # a NaN α or β fails every comparison: MIND would never retrieve

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(self), indent=2) + "\n")
        return path

    @classmethod
    def load(cls, path: str | Path) -> "MindParams":
        """Read what `save` wrote (the `TriggerCalibrator` saves its learned values this way); anything
        else is a `DataError` naming the file and the value."""
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"trigger parameters {str(path)!r} do not exist")
        values, _ = read_json(path)
        if not isinstance(values, dict):
            raise DataError(path, None, f"expected a JSON object of {', '.join(f.name for f in fields(cls))}, "
                                        f"found a {type(values).__name__}")
        required = [f.name for f in fields(cls) if f.name not in ("threshold", "attention")]
        missing = [n for n in required if not _is_number(values.get(n))]
        if missing:
            raise DataError(path, None, f"missing or non-numeric {', '.join(missing)}")
        threshold, attention = values.get("threshold"), values.get("attention")
        if threshold is not None and not _is_number(threshold):
            raise DataError(path, None, f"threshold should be a number or null, found {threshold!r}")
        if attention is not None and attention not in ATTENTION_KINDS:
            raise DataError(path, None, f"attention should be one of {', '.join(ATTENTION_KINDS)} or null, "
                                        f"found {attention!r}")
        try:
            return cls(**{n: float(values[n]) for n in required},
                       threshold=None if threshold is None else float(threshold), attention=attention)
        except ConfigError as error:  # NaN or an infinity (Python's json reads them)
            raise DataError(path, None, str(error)) from None


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# -- the formulas, over padded (rows, width) values with a mask ----------------------------------


def max_rind_score(entropy: Tensor, attention: Tensor, content: Tensor, mask: Tensor) -> Tensor:
    """max over the words of S = H · maxAttn · s, per row."""
    return (entropy * attention * content).masked_fill(~mask, float("-inf")).amax(-1)


def dynamic_threshold(entropy: Tensor, attention: Tensor, mask: Tensor, alpha, beta) -> Tensor:
    """MIND's θ = α·mean(H) + β·mean(maxAttn) over every word of the row."""
    n = mask.sum(-1).clamp(min=1)
    return alpha * (entropy * mask).sum(-1) / n + beta * (attention * mask).sum(-1) / n


def entity_confidence(entropy: Tensor, attention: Tensor, mask: Tensor, gamma, delta) -> Tensor:
    """conf(e) = max over the entity's tokens of γ/(1+H) + δ·maxAttn, per row."""
    return (gamma / (1 + entropy) + delta * attention).masked_fill(~mask, float("-inf")).amax(-1)


def trigger_logits(entropy: Tensor, attention: Tensor, content: Tensor, mask: Tensor, alpha, beta,
                   temperature: float) -> Tensor:
    """The relaxed trigger: (max S − θ) / T, whose sigmoid is P(retrieve)."""
    theta = dynamic_threshold(entropy, attention, mask, alpha, beta)
    return (max_rind_score(entropy, attention, content, mask) - theta) / temperature


def entity_logits(entropy: Tensor, attention: Tensor, mask: Tensor, gamma, delta, threshold,
                  temperature: float) -> Tensor:
    """The relaxed entity filter: (conf − threshold) / T, whose sigmoid is P(keep)."""
    return (entity_confidence(entropy, attention, mask, gamma, delta) - threshold) / temperature


# -- the hard form, for one generated sentence or entity -----------------------------------------


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


def decide(signals: WordSignals, params: MindParams, fixed: float | None = None) -> TriggerDecision:
    """Retrieve when max S > θ: θ = `fixed` when given (DRAGIN), else α·mean(H) + β·mean(maxAttn) (MIND)."""
    if len(signals.words) == 0:
        return TriggerDecision(False, 0.0, math.inf if fixed is None else fixed, None)
    row = (signals.entropy[None], signals.max_attention[None], torch.ones(1, len(signals.words), dtype=torch.bool))
    best = int(rind_scores(signals).argmax())
    score = float(max_rind_score(row[0], row[1], signals.content[None], row[2]))
    threshold = fixed if fixed is not None else float(dynamic_threshold(*row, params.alpha, params.beta))
    return TriggerDecision(score > threshold, score, threshold, signals.words[best])


def token_confidence(entropy: Tensor, max_attention: Tensor, params: MindParams) -> float:
    """conf(e) of one entity from its tokens' signals; an entity with no tokens has confidence 0."""
    if entropy.numel() == 0:
        return 0.0
    mask = torch.ones(1, entropy.numel(), dtype=torch.bool)
    return float(entity_confidence(entropy.float()[None], max_attention.float()[None], mask, params.gamma, params.delta))
