"""A causal language model for greedy batched generation, with the per-token signals MIND needs.

The triple extractor, the KiRAG Constructor, the reader and MIND all generate through the
`LanguageModel` interface; `CausalLM` (transformers) implements it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, Protocol

import torch
from torch import Tensor
from tqdm.auto import tqdm
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    StoppingCriteria,
    StoppingCriteriaList,
)

from models.chat import Message
from models.packaged import from_pretrained, resolve_lm

@dataclass
class TokenSignals:
    """Per generated token: its decoded text, the entropy (nats) of the raw next-token distribution
    that produced it, and the largest head-averaged attention it receives from any later token."""

    pieces: list[str]
    entropy: Tensor
    max_attention: Tensor


@dataclass
class Generation:
    text: str
    prompt_tokens: int
    new_tokens: int
    token_ids: list[int]
    signals: TokenSignals | None = None


class LanguageModel(Protocol):
    """What every stage asks of an LM: greedy generation for a batch of prompts or chats."""

    def format_chat(self, messages: list[Message]) -> str: ...

    def generate(self, prompts: list[str], max_new_tokens: int = 256, batch_size: int = 8, stop: list[str] | None = None,
                 stop_repeated_lines: bool = False, return_signals: bool = False,
                 show_progress: bool = False) -> list[Generation]: ...

    def chat(self, conversations: list[list[Message]], **generate_kwargs) -> list[Generation]: ...


def token_entropy(logits: Tensor) -> Tensor:
    """Shannon entropy (nats) of softmax(logits) over the last dimension, in float32.

    -inf logits (masked tokens) contribute 0; +inf is clamped to the largest float so it cannot give NaN.
    """
    logp = torch.log_softmax(logits.float().clamp(max=torch.finfo(torch.float32).max), dim=-1)
    p = logp.exp()
    return -(p * logp.masked_fill(p == 0, 0.0)).sum(-1)


def max_attention_received(attention: Tensor) -> Tensor:
    """For attention weights `(..., query, key)`, the largest weight each key gets from a LATER query.

    The diagonal is excluded and the last position gets 0. Left padding needs no mask: pad
    queries sit before every real key.
    """
    return attention.tril(-1).amax(dim=-2)


class RepeatedLineStop(StoppingCriteria):
    """Ends a row once it completes a non-empty line it has already written.

    A small LM asked for a list (triples, say) often loops on one line until `max_new_tokens`;
    in a batch, that one row would keep every other row waiting.
    """

    def __init__(self, tokenizer: PreTrainedTokenizerBase, prompt_width: int) -> None:
        self.tokenizer = tokenizer
        self.prompt_width = prompt_width

    def __call__(self, input_ids: Tensor, scores: Tensor, **kwargs) -> Tensor:
        done = torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
        for row, last in enumerate(input_ids[:, -1].tolist()):
            if "\n" not in self.tokenizer.decode([last]):
                continue  # only a token that ends a line can complete a repeat
            ids = input_ids[row, self.prompt_width :].tolist()
            lines = [line.strip() for line in self.tokenizer.decode(ids, skip_special_tokens=True).split("\n")[:-1]]
            lines = [line for line in lines if line]
            done[row] = len(lines) != len(set(lines))
        return done


class CausalLM:
    """Greedy, batched, deterministic generation from a causal LM.

    `name_or_path`: a packaged short name (`"qwen2.5-coder-0.5b-instruct"`, `"qwen-0.5b"`), a hub id,
    a folder, or a `.gguf` file (or pass `gguf_file`). Pass `model` and `tokenizer` to wrap objects
    already in memory. `attn_implementation=None` generates with SDPA; the attention signals
    always come from an eager pass, switched on just for it.
    """

    def __init__(
        self,
        name_or_path: str = "qwen2.5-coder-0.5b-instruct",
        gguf_file: str | None = None,
        dtype: Literal["float32", "bfloat16"] = "float32",
        attn_implementation: str | None = None,
        device: str = "auto",
        cache_dir: str | os.PathLike | None = None,
        attention_layer: int = -1,
        model: PreTrainedModel | None = None,
        tokenizer: PreTrainedTokenizerBase | None = None,
    ) -> None:
        if dtype not in ("float32", "bfloat16"):
            raise ValueError(f"dtype must be 'float32' or 'bfloat16', got {dtype!r}")
        if model is None or tokenizer is None:
            path, gguf = resolve_lm(name_or_path, gguf_file, cache_dir)
            if model is None:
                model = from_pretrained(AutoModelForCausalLM, path, gguf_file=gguf, dtype=getattr(torch, dtype),
                                        attn_implementation=attn_implementation or "sdpa")
                if device == "auto":
                    device = "cuda" if torch.cuda.is_available() else "cpu"
                model.to(device)
            tokenizer = tokenizer if tokenizer is not None else from_pretrained(AutoTokenizer, path, gguf_file=gguf)
        self.name_or_path = name_or_path
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.attention_layer = attention_layer
        eos = model.generation_config.eos_token_id
        eos = [eos] if isinstance(eos, int) else list(eos or [])
        if tokenizer.eos_token_id is not None:
            eos.append(tokenizer.eos_token_id)
        self.eos_ids = sorted(set(eos))
        if tokenizer.pad_token_id is not None:
            self.pad_id = tokenizer.pad_token_id
        elif self.eos_ids:
            self.pad_id = self.eos_ids[0]
        else:
            raise ValueError("the tokenizer has neither a pad nor an EOS token")
        # Generated ids end at the first of these: finished rows of a batch are filled with pad ids.
        self.end_ids = set(self.eos_ids) | {self.pad_id}

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def format_chat(self, messages: list[Message]) -> str:
        """The tokenizer's chat template with the generation prompt.

        Without a template: one `"{role}: {content}"` line per message, then `"assistant: "`.
        """
        if self.tokenizer.chat_template:
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant: "

    def chat(self, conversations: list[list[Message]], **generate_kwargs) -> list[Generation]:
        return self.generate([self.format_chat(c) for c in conversations], **generate_kwargs)

    def encode(self, prompt: str) -> list[int]:
        """Token ids of a prompt; special tokens (BOS) are added unless the text already starts with BOS."""
        bos = self.tokenizer.bos_token
        add_special = not (bos and prompt.startswith(bos))
        return self.tokenizer(prompt, add_special_tokens=add_special)["input_ids"]

    @torch.no_grad()
    def generate(
        self,
        prompts: list[str],
        max_new_tokens: int = 256,
        batch_size: int = 8,
        stop: list[str] | None = None,
        stop_repeated_lines: bool = False,
        return_signals: bool = False,
        show_progress: bool = False,
    ) -> list[Generation]:
        """Greedy continuations of `prompts`, in input order.

        Prompts are batched longest first (left-padded), so a batch pads to similar lengths. The
        text of a generation ends before the first `stop` string to complete; its token ids (and
        signals) end with the token that completed it, so ids, signals and text stay aligned.
        `stop_repeated_lines` ends a generation at the first line it repeats (see `RepeatedLineStop`).
        """
        encoded = [self.encode(p) for p in prompts]
        order = sorted(range(len(prompts)), key=lambda i: len(encoded[i]), reverse=True)
        results: list[Generation | None] = [None] * len(prompts)
        with tqdm(total=len(prompts), desc="generate", unit="prompt", disable=not show_progress, leave=False) as bar:
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                batch = self._generate_batch(
                    [encoded[i] for i in idx], max_new_tokens, stop or [], stop_repeated_lines, return_signals
                )
                for i, generation in zip(idx, batch):
                    results[i] = generation
                bar.update(len(idx))
        return results

    def _left_pad(self, sequences: list[list[int]]) -> tuple[Tensor, Tensor]:
        width = max(len(s) for s in sequences)
        ids = torch.full((len(sequences), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for row, seq in enumerate(sequences):
            if seq:
                ids[row, width - len(seq) :] = torch.tensor(seq)
                mask[row, width - len(seq) :] = 1
        return ids.to(self.device), mask.to(self.device)

    def _generate_batch(
        self,
        prompts: list[list[int]],
        max_new_tokens: int,
        stop: list[str],
        stop_repeated_lines: bool,
        return_signals: bool,
    ) -> list[Generation]:
        input_ids, attention_mask = self._left_pad(prompts)
        criteria = [RepeatedLineStop(self.tokenizer, input_ids.shape[1])] if stop_repeated_lines else []
        out = self.model.generate(
            input_ids=input_ids,
            attention_mask=attention_mask,
            max_new_tokens=max_new_tokens,
            # Plain greedy: the argmax of the raw logits, whatever the model's generation_config says.
            do_sample=False,
            num_beams=1,
            repetition_penalty=1.0,
            pad_token_id=self.pad_id,
            eos_token_id=self.eos_ids or None,
            stop_strings=stop or None,
            tokenizer=self.tokenizer if stop else None,
            stopping_criteria=StoppingCriteriaList(criteria),
            return_dict_in_generate=True,
            output_logits=return_signals,
        )
        new = out.sequences[:, input_ids.shape[1] :].tolist()
        finished = [self._finish(row, stop) for row in new]
        generations = [
            Generation(text=text, prompt_tokens=len(p), new_tokens=len(ids), token_ids=ids)
            for p, (ids, text) in zip(prompts, finished)
        ]
        if return_signals:
            entropy = torch.stack([token_entropy(step) for step in out.logits], dim=1).cpu()
            attention = self._max_attention([p + g.token_ids for p, g in zip(prompts, generations)])
            for row, g in enumerate(generations):
                n = g.new_tokens
                g.signals = TokenSignals(
                    pieces=[self.tokenizer.decode([i]) for i in g.token_ids],
                    entropy=entropy[row, :n],
                    max_attention=attention[row, attention.shape[1] - n :],
                )
        return generations

    def _finish(self, ids: list[int], stop: list[str]) -> tuple[list[int], str]:
        """Drop the end token and what follows it, then cut at the first stop string to complete."""
        end = next((k for k, t in enumerate(ids) if t in self.end_ids), len(ids))
        ids = ids[:end]
        decode = lambda k: self.tokenizer.decode(ids[:k], skip_special_tokens=True)
        text = decode(len(ids))
        if not any(s in text for s in stop):
            return ids, text
        k = next(k for k in range(1, len(ids) + 1) if any(s in decode(k) for s in stop))
        text = decode(k)
        return ids[:k], text[: min(text.find(s) for s in stop if s in text)]

    @contextlib.contextmanager
    def _eager_attention(self) -> Iterator[None]:
        previous = self.model.config._attn_implementation
        if previous != "eager":
            self.model.set_attn_implementation("eager")
        try:
            yield
        finally:
            if previous != "eager":
                self.model.set_attn_implementation(previous)

    def _max_attention(self, sequences: list[list[int]]) -> Tensor:
        """`max_attention_received` of every position of the left-padded `sequences`, shape (batch, width).

        One eager forward pass of the decoder (no LM head) over prompt + generated tokens; a hook
        keeps only the chosen layer's attention weights, because `output_attentions=True` would
        hold every layer's (batch, heads, width, width) tensor at once.
        """
        input_ids, attention_mask = self._left_pad(sequences)
        position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
        decoder = self.model.get_decoder()
        captured = {}
        hook = decoder.layers[self.attention_layer].self_attn.register_forward_hook(
            lambda module, args, output: captured.update(weights=output[1])
        )
        try:
            with self._eager_attention():
                decoder(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, use_cache=False)
        finally:
            hook.remove()
        if captured.get("weights") is None:
            raise RuntimeError(f"{type(self.model).__name__} returned no attention weights even with eager attention")
        return max_attention_received(captured["weights"].float().mean(dim=1)).cpu()


@dataclass
class LMConfig:
    """A `CausalLM` as configured from YAML (`prepare.py kg`, `evaluate.py`)."""

    name: str = "qwen2.5-coder-0.5b-instruct"
    """a packaged short name, a folder, a `.gguf` file or a hub id"""
    gguf_file: str | None = None
    """the GGUF file inside the folder or hub repository `name`"""
    dtype: Literal["float32", "bfloat16"] = "float32"
    """weights and compute type (bfloat16 is slower on CPUs without native support)"""
    device: str = "auto"
    """`auto` (CUDA when present), `cpu`, `cuda` or `cuda:N`"""

    def build(self) -> CausalLM:
        return CausalLM(self.name, gguf_file=self.gguf_file, dtype=self.dtype, device=self.device)


class LazyLM:
    """Stands in for `config.build()` and loads the model on first use, so a run that never
    generates (KiRAG in Aligner-only mode over a complete KG) never pays for loading it."""

    def __init__(self, config: LMConfig) -> None:
        self.config = config

    @cached_property
    def lm(self) -> CausalLM:
        return self.config.build()

    def __getattr__(self, name: str):  # called only for what LazyLM itself lacks: chat, generate, ...
        return getattr(self.lm, name)
