"""The transformers backend: greedy batched generation with `model.generate`, and MIND's signals by
teacher forcing (one eager forward pass over prompt + generated tokens, reusing the keys and values
of a prefix scored before)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Literal

import torch
from torch import Tensor
from tqdm.auto import tqdm
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DynamicCache,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    StoppingCriteria,
    StoppingCriteriaList,
)
from transformers.cache_utils import DynamicLayer

from models.lm.chat import Message
from models.lm.fits import require_fit, weights_bytes
from models.lm.interface import Generation, TokenSignals, common_prefix, repeats_a_line, stop_at
from models.packaged import from_pretrained, resolve_lm


def token_entropy(logits: Tensor) -> Tensor:
    """Shannon entropy (nats) of softmax(logits) over the last dimension, in float32.

    -inf logits (masked tokens) contribute 0; +inf is clamped to the largest float so it cannot give NaN.
    """
    logp = torch.log_softmax(logits.float().clamp(max=torch.finfo(torch.float32).max), dim=-1)
    p = logp.exp()
    return -(p * logp.masked_fill(p == 0, 0.0)).sum(-1)


def max_attention_received(attention: Tensor, first_query: int = 0) -> Tensor:
    """For attention weights `(..., query, key)`, the largest weight each key gets from a LATER query.

    Query i sits at position `first_query + i` (the queries of a pass over cached keys start past
    them); keys are positions from 0, and those before `first_query` miss the queries left out. The
    diagonal is excluded and the last position gets 0. Left padding needs no mask: pad queries sit
    before every real key.
    """
    return attention.tril(first_query - 1).amax(dim=-2)


def max_attention_in_sentence(attention: Tensor, n: int) -> Tensor:
    """For head-averaged weights `(query, key)` whose last `n` queries and keys are the generated
    tokens: the largest weight each generated token gets from a later generated token, once each
    generated query's weights over the generated keys (its own included) are renormalised to sum to 1.

    DRAGIN normalises this way, so a value is in [0, 1] whatever the prompt's length; raw weights over
    a long prompt are about 1/length, too small for any threshold stated without that length.
    """
    if n == 0:
        return attention.new_zeros(0)
    generated = attention[..., -n:, -n:].tril()
    generated = generated / generated.sum(-1, keepdim=True).clamp(min=torch.finfo(generated.dtype).tiny)
    return max_attention_received(generated)


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
            done[row] = repeats_a_line(self.tokenizer.decode(ids, skip_special_tokens=True))
        return done


class CausalLM:
    """Greedy, batched, deterministic generation from a causal LM (the `LanguageModel` of transformers).

    `name_or_path`: a packaged short name (`"qwen2.5-coder-0.5b-instruct"`, `"qwen-0.5b"`), a hub id,
    a folder, or a `.gguf` file (or pass `gguf_file`). Pass `model` and `tokenizer` to wrap objects
    already in memory. `attn_implementation=None` generates with SDPA; the signals always come from
    an eager pass, switched on just for it. `prefix_cache`: how many sequences scored one at a time
    keep their keys and values for the next `token_signals` to reuse (0: none).
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
        prefix_cache: int = 4,
    ) -> None:
        if dtype not in ("float32", "bfloat16"):
            raise ValueError(f"dtype must be 'float32' or 'bfloat16', got {dtype!r}")
        if model is None or tokenizer is None:
            path, gguf = resolve_lm(name_or_path, gguf_file, cache_dir)
            if model is None:
                if device == "auto":
                    device = "cuda" if torch.cuda.is_available() else "cpu"
                if gguf is None and (weights := weights_bytes(path, dtype)) is not None:
                    require_fit(f"{name_or_path} on transformers ({dtype})", {"weights": weights},
                                "set lm.dtype bfloat16, use a smaller model or the llama_cpp backend", device)
                model = from_pretrained(AutoModelForCausalLM, path, gguf_file=gguf, dtype=getattr(torch, dtype),
                                        attn_implementation=attn_implementation or "sdpa")
                model.to(device)
            tokenizer = tokenizer if tokenizer is not None else from_pretrained(AutoTokenizer, path, gguf_file=gguf)
        self.name_or_path = name_or_path
        self.model = model.eval()
        self.context_length: int | None = getattr(model.config, "max_position_embeddings", None)
        self.tokenizer = tokenizer
        self.attention_layer = attention_layer
        self.prefix_cache = prefix_cache
        self._prefixes: list[tuple[list[int], DynamicCache]] = []  # (token ids, their cache), most recent last
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
        )
        new = out.sequences[:, input_ids.shape[1] :].tolist()
        finished = [self._finish(row, stop) for row in new]
        generations = [
            Generation(text=text, prompt_tokens=len(p), new_tokens=len(ids), token_ids=ids)
            for p, (ids, text) in zip(prompts, finished)
        ]
        if return_signals:
            for g, signals in zip(generations, self.token_signals(prompts, [g.token_ids for g in generations])):
                g.signals = signals
        return generations

    def _finish(self, ids: list[int], stop: list[str]) -> tuple[list[int], str]:
        """Drop the end token and what follows it, then cut at the first stop string to complete."""
        end = next((k for k, t in enumerate(ids) if t in self.end_ids), len(ids))
        ids = ids[:end]
        decode = lambda k: self.tokenizer.decode(ids[:k], skip_special_tokens=True)
        text = decode(len(ids))
        if stop_at(text, stop) is None:
            return ids, text
        k = next(k for k in range(1, len(ids) + 1) if stop_at(decode(k), stop) is not None)
        text = decode(k)
        return ids[:k], text[: stop_at(text, stop)]

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

    @torch.no_grad()
    def token_signals(self, prompts: list[list[int]], generated: list[list[int]]) -> list[TokenSignals]:
        """MIND's signals of generated tokens, by teacher forcing: ONE eager forward pass over each
        prompt + generated sequence (batched, left-padded) gives each generated token's entropy (of
        the raw distribution that produced it) and the largest attention it receives from a later
        token, raw and renormalised over the generated tokens (`max_attention_in_sentence`). The
        tokens may come from any backend with this tokenizer's vocabulary.

        A single sequence starts from the keys and values of the longest prefix it shares with a
        sequence scored before (MIND re-scores the same prompt of facts and demos for every
        sentence), and forwards the rest: at least the last prompt token, whose logits give the
        first generated token's entropy, and the generated tokens, whose queries alone give the
        attention a generated token receives from later tokens.

        Only the chosen layer's attention weights are kept (a hook; `output_attentions=True` would
        hold every layer's (batch, heads, width, width) tensor at once), and the LM head runs only
        on the positions that produced generated tokens.
        """
        sequences = [p + g for p, g in zip(prompts, generated, strict=True)]
        single = len(sequences) == 1
        if single:
            start, past = self._cached_prefix(sequences[0], len(prompts[0]) - 1)
            input_ids = torch.tensor([sequences[0][start:]], device=self.device)
            attention_mask, position_ids = None, torch.arange(start, len(sequences[0]), device=self.device)[None]
        else:
            start, past = 0, None
            input_ids, attention_mask = self._left_pad(sequences)
            position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
        use_cache = single and self.prefix_cache > 0
        decoder = self.model.get_decoder()
        captured = {}
        hook = decoder.layers[self.attention_layer].self_attn.register_forward_hook(
            lambda module, args, output: captured.update(weights=output[1])
        )
        try:
            with self._eager_attention():
                out = decoder(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                              cache=past, use_cache=use_cache)
        finally:
            hook.remove()
        if use_cache:
            self._remember(sequences[0], out.cache)
        if captured.get("weights") is None:
            raise RuntimeError(f"{type(self.model).__name__} returned no attention weights even with eager attention")
        weights = captured["weights"].float().mean(dim=1)
        attention = max_attention_received(weights, start).cpu()
        width, head, hidden = attention.shape[-1], self.model.get_output_embeddings(), out.last_hidden_state
        signals = []
        for row, ids in enumerate(generated):
            n = len(ids)
            # position t's logits produce token t + 1: the generated tokens come from positions [W-n-1, W-1)
            logits = head(hidden[row, width - n - 1 - start : width - 1 - start])
            signals.append(TokenSignals(pieces=[self.tokenizer.decode([i]) for i in ids],
                                        entropy=token_entropy(logits).cpu(),
                                        max_attention=attention[row, width - n :],
                                        max_attention_in_sentence=max_attention_in_sentence(weights[row], n).cpu()))
        return signals

    def _cached_prefix(self, ids: list[int], limit: int) -> tuple[int, DynamicCache | None]:
        """The longest prefix of `ids` (at most `limit` tokens) that a stored pass computed, with a COPY of
        its keys and values: the forward pass extends that copy, and the stored entry stays for others."""
        length, k = max(((common_prefix(cached, ids), k) for k, (cached, _) in enumerate(self._prefixes)),
                        default=(0, None))
        length = min(length, limit)
        if length <= 0:
            return 0, None
        self._prefixes.append(self._prefixes.pop(k))  # the most recently used last
        layers = self._prefixes[-1][1].layers
        return length, DynamicCache([(layer.keys[..., :length, :], layer.values[..., :length, :]) for layer in layers])

    def _remember(self, ids: list[int], cache: DynamicCache) -> None:
        """Store the cache of `ids`, replacing the entries it extends, the least recently used beyond
        `prefix_cache`. Only full-attention layers hold every position, so only they can be cut to a prefix."""
        if any(type(layer) is not DynamicLayer for layer in cache.layers):
            return
        kept = [(cached, c) for cached, c in self._prefixes if common_prefix(cached, ids) < len(cached)]
        self._prefixes = (kept + [(ids, cache)])[-self.prefix_cache :]
