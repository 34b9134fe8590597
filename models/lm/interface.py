"""The language-model interface every stage generates through, and what all backends share.

The triple extractor, the KiRAG Constructor, the reader and MIND call `LanguageModel.generate` /
`chat`: greedy decoding for a batch of prompts, ending at stop strings, at the end token, or (for
lists) at the first repeated line. Backends (chosen by `LMConfig.backend`, see `models.lm.config`):
`models.lm.transformers_backend.CausalLM`, `models.lm.llama_cpp_backend.LlamaCppLM`,
`models.lm.vllm_backend.VllmLM`.
MIND's per-token signals (entropy over the full vocabulary, attention received) come from one
transformers forward pass over prompt + generated tokens, whichever backend generated them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from torch import Tensor

from models.lm.chat import Message


Attention = Literal["raw", "sentence"]
"""Which attention MIND reads: `raw` weights over prompt + text (about 1/length each), or weights
renormalised over the generated tokens (`sentence`, DRAGIN's way: in [0, 1] whatever the prompt)."""


@dataclass
class TokenSignals:
    """Per generated token: its decoded text, the entropy (nats) of the raw next-token distribution
    that produced it, and the largest head-averaged attention it receives from any later token, raw
    (`max_attention`) and from later generated tokens once each one's weights over the generated
    tokens are renormalised to sum to 1 (`max_attention_in_sentence`)."""

    pieces: list[str]
    entropy: Tensor
    max_attention: Tensor
    max_attention_in_sentence: Tensor

    def attention(self, kind: Attention) -> Tensor:
        return self.max_attention if kind == "raw" else self.max_attention_in_sentence


@dataclass
class Generation:
    text: str
    prompt_tokens: int
    new_tokens: int
    token_ids: list[int]
    signals: TokenSignals | None = None
    logprobs: list[float] | None = None  # of each generated token, where the backend gives them


class LanguageModel(Protocol):
    """What every stage asks of an LM: greedy generation for a batch of prompts or chats; the tokens of
    a prompt, and how many a prompt and its output may hold together (`context_length`, None: no
    known limit), so that a prompt can be fitted before it is sent."""

    context_length: int | None

    def format_chat(self, messages: list[Message]) -> str: ...

    def encode(self, prompt: str) -> list[int]: ...

    def generate(self, prompts: list[str], max_new_tokens: int = 256, batch_size: int = 8, stop: list[str] | None = None,
                 stop_repeated_lines: bool = False, return_signals: bool = False,
                 show_progress: bool = False) -> list[Generation]: ...

    def chat(self, conversations: list[list[Message]], **generate_kwargs) -> list[Generation]: ...


def repeats_a_line(text: str) -> bool:
    """Whether `text` has completed a non-empty line it had already written (the last, unfinished line
    aside). A small LM asked for a list (triples, say) often loops on one line until the token limit."""
    lines = [line.strip() for line in text.split("\n")[:-1]]
    lines = [line for line in lines if line]
    return len(lines) != len(set(lines))


def stop_at(text: str, stop: list[str]) -> int | None:
    """Where the text ends before its first stop string, or None when it holds none."""
    ends = [text.find(s) for s in stop if s in text]
    return min(ends) if ends else None


def common_prefix(a: list[int], b: list[int]) -> int:
    """How many leading tokens `a` and `b` share."""
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


class Slots:
    """What each of `n` KV-cache slots holds, and where a prompt goes.

    A prompt reuses the longest prefix any slot holds (copied into its own slot: a copy costs no
    compute), so the choice of its slot decides only what is lost: the free slot that loses the
    fewest cached tokens (those past the prefix it shares with the prompt), then the one sharing the
    most, then the least recently used. Interleaved prompt families (MIND's sentence, entity and
    filter prompts, one at a time) thus keep a slot each instead of evicting each other's
    instruction and demonstrations.
    """

    def __init__(self, n: int) -> None:
        self.held: list[list[int]] = [[] for _ in range(n)]  # the tokens each slot's cache holds
        self.used = [0] * n  # when each slot was last given a prompt
        self._clock = 0

    def choose(self, free: list[int], prompt: list[int]) -> int:
        """The free slot for `prompt`; the caller then `hold`s it there."""
        def cost(s: int) -> tuple[int, int, int]:
            shared = common_prefix(self.held[s], prompt)
            return len(self.held[s]) - shared, -shared, self.used[s]
        return min(free, key=cost)

    def reused(self, prompt: list[int]) -> tuple[int, int]:
        """The slot holding the longest prefix of `prompt`, and how many of its tokens need no decoding:
        that prefix, but never the prompt's last token, whose logits give the first new one."""
        source = max(range(len(self.held)), key=lambda s: common_prefix(self.held[s], prompt))
        return source, min(common_prefix(self.held[source], prompt), len(prompt) - 1)

    def hold(self, slot: int, tokens: list[int]) -> None:
        self._clock += 1
        self.held[slot], self.used[slot] = list(tokens), self._clock

    def forget(self) -> None:
        self.held = [[] for _ in self.held]
