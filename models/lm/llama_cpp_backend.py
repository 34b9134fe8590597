"""The llama.cpp backend (llama-cpp-python): the packaged q4 GGUF used as it is, on every core.

`Llama` decodes one sequence at a time, so generation goes through the binding's low-level API
instead: one context has `parallel` slots, each a sequence with its own KV cache of `n_ctx` tokens
(separate caches: a token attends to its own sequence only, which measured 2x faster than one
shared cache here). Each `llama_decode` call advances every running sequence by one token,
reading the weights once for all of them; the prompt of a new one goes into a slot as soon as
another finishes (continuous batching), decoded in a call of its own. A slot keeps what it last held:
a prompt starts from the longest prefix any slot holds (instruction, demonstrations), copied into
its own, so a shared prefix is decoded once, not once per prompt; `Slots` chooses the slot that loses
the least. Prompts are taken in sorted order so that neighbours share the most.

Decoding is greedy (the argmax of the raw logits) with no repetition penalty, as in the
transformers backend, and the chat template is the GGUF's own, which renders the same text as
transformers' `apply_chat_template` for the packaged model (a test checks it).
"""

from __future__ import annotations

import ctypes
import os
import weakref
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import llama_cpp
import numpy as np
from llama_cpp import Llama
from llama_cpp._internals import LlamaContext
from llama_cpp.llama_chat_format import Jinja2ChatFormatter
from tqdm.auto import tqdm

from core.config import ConfigError
from models.lm.chat import Message
from models.lm.fits import kv_cache_bytes, require_fit
from models.lm.interface import Generation, Slots, common_prefix, repeats_a_line, stop_at


@dataclass
class _Sequence:
    """One prompt being continued: its generated ids and text."""

    prompt: list[int]
    out: list[int] = field(default_factory=list)
    text: str = ""
    done: bool = False


def _free(batch, llm: Llama) -> None:
    llama_cpp.llama_batch_free(batch)
    llm.close()  # the model, and before it the contexts made on it


class LlamaCppLM:
    """A `LanguageModel` on a GGUF file. `threads=None` uses every core; `n_ctx` is the context of
    one sequence (prompt and output); `parallel` sequences are decoded together at most."""

    def __init__(self, gguf: str | os.PathLike, n_ctx: int = 4096, threads: int | None = None,
                 parallel: int = 8) -> None:
        threads = threads or os.cpu_count() or 1
        self.path = Path(gguf)
        what = f"{self.path.name} on llama_cpp"
        require_fit(what, {"weights": self.path.stat().st_size}, "use a smaller GGUF, or free memory")
        # The Llama object gives the vocabulary, the metadata and a loaded model; its own context is not used.
        self.llm = Llama(model_path=str(self.path), n_ctx=64, n_threads=threads, verbose=False)
        self.n_ctx, self.parallel = n_ctx, parallel
        self.context_length = n_ctx
        require_fit(what, {"KV caches": kv_cache_bytes(self.llm.metadata, n_ctx * parallel)},
                    f"lower lm.parallel ({parallel} slots) or lm.n_ctx ({n_ctx} tokens a slot)")
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = n_ctx * parallel
        params.n_batch = params.n_ubatch = 512
        params.n_seq_max = parallel
        params.kv_unified = False  # a cache per sequence
        params.n_threads = params.n_threads_batch = threads
        try:
            self._ctx = LlamaContext(model=self.llm._model, params=params, verbose=False)
        except ValueError as error:
            raise ConfigError("lm", f"llama.cpp could not make a context of {parallel} slots x {n_ctx} tokens "
                                    "(out of memory?): lower lm.parallel or lm.n_ctx") from error
        self._memory = llama_cpp.llama_get_memory(self._ctx.ctx)
        self._batch = llama_cpp.llama_batch_init(params.n_batch, 0, 1)
        # Freed before the interpreter tears llama_cpp down (finalizers run at exit): Llama's own __del__
        # would run later and print a traceback from inside the half-unloaded module.
        weakref.finalize(self, _free, self._batch, self.llm)
        self.slots = Slots(parallel)
        self.prompt_tokens_decoded = 0  # prompt tokens not found in a slot's cache: what prefix reuse left to do
        vocab = self.llm._model.vocab
        self._n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
        meta = self.llm.metadata
        self.bos = self._piece(self.llm.token_bos()) if self.llm.token_bos() >= 0 else ""
        self.formatter = Jinja2ChatFormatter(template=meta["tokenizer.chat_template"], bos_token=self.bos,
                                             eos_token=self._piece(self.llm.token_eos()))
        self._is_end = lambda token: bool(llama_cpp.llama_vocab_is_eog(vocab, token))

    def forget(self) -> None:
        """Empty every slot's cache, so that the next prompts reuse nothing decoded before (a benchmark
        comparing two orders of the same prompts starts each from nothing)."""
        llama_cpp.llama_memory_clear(self._memory, True)
        self.slots.forget()

    def _piece(self, token: int) -> str:
        return self.llm.detokenize([token], special=True).decode("utf-8", errors="replace")

    def format_chat(self, messages: list[Message]) -> str:
        """The GGUF's chat template with the generation prompt."""
        return self.formatter(messages=messages).prompt

    def chat(self, conversations: list[list[Message]], **generate_kwargs) -> list[Generation]:
        return self.generate([self.format_chat(c) for c in conversations], **generate_kwargs)

    def encode(self, prompt: str) -> list[int]:
        """Token ids of a prompt, special tokens parsed; BOS is added (where the model wants one) unless present."""
        return self.llm.tokenize(prompt.encode("utf-8"), add_bos=not (self.bos and prompt.startswith(self.bos)),
                                 special=True)

    def generate(self, prompts: list[str], max_new_tokens: int = 256, batch_size: int = 8, stop: list[str] | None = None,
                 stop_repeated_lines: bool = False, return_signals: bool = False,
                 show_progress: bool = False) -> list[Generation]:
        """Greedy continuations of `prompts`, in input order, at most `batch_size` (and `parallel`)
        decoded together, in any of the `parallel` slots (see `Slots`).

        As in the transformers backend, a text ends before the first stop string to complete, and
        its token ids end with the token that completed it.
        """
        if return_signals:
            raise ValueError("llama.cpp gives no attention weights: MIND's signals come from the transformers "
                             "scorer (`models.lm.config.WithSignals`)")
        encoded = [self.encode(p) for p in prompts]
        for ids in encoded:
            if len(ids) + max_new_tokens > self.n_ctx:
                raise ValueError(f"a prompt of {len(ids)} tokens plus {max_new_tokens} new ones exceeds the llama.cpp "
                                 f"context of {self.n_ctx} tokens (raise n_ctx)")
        if max_new_tokens <= 0:
            return [Generation(text="", prompt_tokens=len(ids), new_tokens=0, token_ids=[]) for ids in encoded]
        results: list[Generation | None] = [None] * len(prompts)
        pending = deque(sorted(range(len(prompts)), key=prompts.__getitem__))  # neighbours share their longest prefix
        width = min(batch_size, self.parallel)
        running: dict[int, tuple[int, _Sequence]] = {}  # slot -> (prompt index, its sequence)
        with tqdm(total=len(prompts), desc="generate", unit="prompt", disable=not show_progress, leave=False) as bar:
            def take(slot: int, token: int) -> None:
                i, sequence = running[slot]
                self._accept(sequence, token, max_new_tokens, stop or [], stop_repeated_lines)
                if sequence.done:
                    del running[slot]
                    results[i] = Generation(text=sequence.text, prompt_tokens=len(sequence.prompt),
                                            new_tokens=len(sequence.out), token_ids=sequence.out)
                    bar.update(1)

            while pending or running:
                while pending and len(running) < width:  # a prompt alone in its call: llama.cpp splits mixed ones
                    i = pending.popleft()
                    slot = self.slots.choose([s for s in range(self.parallel) if s not in running], encoded[i])
                    running[slot] = (i, _Sequence(encoded[i]))
                    take(slot, self._decode(self._start(slot, encoded[i]))[0])
                step = [(seq.out[-1], len(seq.prompt) + len(seq.out) - 1, slot, True) for slot, (_, seq) in running.items()]
                for token, _, slot, _ in step:
                    self.slots.held[slot].append(token)
                for (_, _, slot, _), token in zip(step, self._decode(step), strict=True):
                    take(slot, token)
        return results

    def _start(self, slot: int, prompt: list[int]) -> list[tuple[int, int, int, bool]]:
        """Start from the longest prefix of `prompt` that any slot holds (copied into `slot` when
        another holds more), all but the prompt's last token, whose logits are needed; return the
        rest of the prompt to decode, with logits on its last token."""
        held = self.slots.held
        source, keep = self.slots.reused(prompt)
        if common_prefix(held[source], prompt) > common_prefix(held[slot], prompt):
            llama_cpp.llama_memory_seq_rm(self._memory, slot, -1, -1)
            llama_cpp.llama_memory_seq_cp(self._memory, source, slot, -1, -1)  # a whole cache: a copy, no compute
        llama_cpp.llama_memory_seq_rm(self._memory, slot, keep, -1)
        self.slots.hold(slot, prompt)
        self.prompt_tokens_decoded += len(prompt) - keep
        return [(t, keep + k, slot, keep + k == len(prompt) - 1) for k, t in enumerate(prompt[keep:])]

    def _decode(self, tokens: list[tuple[int, int, int, bool]]) -> list[int]:
        """Decode (token, position, sequence, wants logits) in calls of at most n_batch tokens; the
        greedy next token of each entry that wants logits, in order."""
        chosen = []
        size = llama_cpp.llama_n_batch(self._ctx.ctx)
        for start in range(0, len(tokens), size):
            part = tokens[start : start + size]
            batch = self._batch
            batch.n_tokens = len(part)
            for j, (token, position, sequence, logits) in enumerate(part):
                batch.token[j], batch.pos[j], batch.n_seq_id[j], batch.logits[j] = token, position, 1, logits
                batch.seq_id[j][0] = sequence
            status = llama_cpp.llama_decode(self._ctx.ctx, batch)
            if status != 0:
                self.slots.forget()  # what the caches hold is no longer known
                llama_cpp.llama_memory_clear(self._memory, True)
                raise RuntimeError(f"llama_decode failed with status {status}")
            for j, (*_, logits) in enumerate(part):
                if logits:
                    row = llama_cpp.llama_get_logits_ith(self._ctx.ctx, j)
                    values = np.ctypeslib.as_array(ctypes.cast(row, ctypes.POINTER(ctypes.c_float)),
                                                   shape=(self._n_vocab,))
                    chosen.append(int(values.argmax()))
        return chosen

    def _accept(self, sequence: _Sequence, token: int, max_new_tokens: int, stop: list[str],
                stop_repeated_lines: bool) -> None:
        """Take the greedy token, or end the sequence at the end token, a stop string, a repeated
        line or the token limit."""
        if self._is_end(token):
            sequence.done = True
            return
        sequence.out.append(token)
        sequence.text = self.llm.detokenize(sequence.out).decode("utf-8", errors="replace")
        end = stop_at(sequence.text, stop)
        if end is not None:
            sequence.text, sequence.done = sequence.text[:end], True
        elif stop_repeated_lines and "\n" in self._piece(token) and repeats_a_line(sequence.text):
            sequence.done = True
        sequence.done = sequence.done or len(sequence.out) >= max_new_tokens
