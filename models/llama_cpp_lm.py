"""The llama.cpp backend (llama-cpp-python): the packaged q4 GGUF used as it is, on every core.

`Llama` decodes one sequence at a time, so generation goes through the binding's low-level API
instead: one context holds up to `batch_size` sequences in a unified KV cache, and each
`llama_decode` call advances every unfinished sequence by one token, reading the weights once for
all of them. The prompts of a batch share their longest common prefix (instruction,
demonstrations): it is decoded once, kept between batches, and shared by every sequence
(`llama_memory_seq_cp` on a unified cache shares cells, it copies nothing). Prompts are taken in
sorted order so that neighbours share the most.

Decoding is greedy (the argmax of the raw logits) with no repetition penalty, as in the
transformers backend, and the chat template is the GGUF's own, which renders the same text as
transformers' `apply_chat_template` for the packaged model (a test checks it).
"""

from __future__ import annotations

import ctypes
import os
import weakref
from dataclasses import dataclass, field
from pathlib import Path

import llama_cpp
import numpy as np
from llama_cpp import Llama
from llama_cpp._internals import LlamaContext
from llama_cpp.llama_chat_format import Jinja2ChatFormatter
from tqdm.auto import tqdm

from models.chat import Message
from models.lm import Generation, common_prefix, repeats_a_line, stop_at

PREFIX = 0  # the sequence that keeps the shared prefix; the prompts of a batch are sequences 1..n



@dataclass
class _Sequence:
    """One prompt being continued: its generated ids and text, and the next token to feed."""

    prompt: list[int]
    out: list[int] = field(default_factory=list)
    text: str = ""
    done: bool = False


class LlamaCppLM:
    """A `LanguageModel` on a GGUF file. `threads=None` uses every core; `n_ctx` is the KV cache
    shared by the sequences decoded together (a batch is cut short where it would not fit)."""

    def __init__(self, gguf: str | os.PathLike, n_ctx: int = 4096, threads: int | None = None,
                 max_sequences: int = 16) -> None:
        threads = threads or os.cpu_count() or 1
        self.path = Path(gguf)
        # The Llama object gives the vocabulary, the metadata and a loaded model; its own context is not used.
        self.llm = Llama(model_path=str(self.path), n_ctx=64, n_threads=threads, verbose=False)
        self.n_ctx, self.max_sequences = n_ctx, max_sequences
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = n_ctx
        params.n_batch = params.n_ubatch = min(512, n_ctx)
        params.n_seq_max = max_sequences + 1  # the shared prefix has its own sequence
        params.kv_unified = True  # every sequence may use any cell: the prompts differ in length
        params.n_threads = params.n_threads_batch = threads
        self._ctx = LlamaContext(model=self.llm._model, params=params, verbose=False)
        self._memory = llama_cpp.llama_get_memory(self._ctx.ctx)
        self._batch = llama_cpp.llama_batch_init(params.n_batch, 0, 1)
        weakref.finalize(self, llama_cpp.llama_batch_free, self._batch)
        self._prefix: list[int] = []  # what sequence PREFIX holds
        vocab = self.llm._model.vocab
        self._n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
        meta = self.llm.metadata
        self.bos = self._piece(self.llm.token_bos()) if self.llm.token_bos() >= 0 else ""
        self.formatter = Jinja2ChatFormatter(template=meta["tokenizer.chat_template"], bos_token=self.bos,
                                             eos_token=self._piece(self.llm.token_eos()))
        self._is_end = lambda token: bool(llama_cpp.llama_vocab_is_eog(vocab, token))

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
        """Greedy continuations of `prompts`, in input order, `batch_size` sequences decoded together.

        As in the transformers backend, a text ends before the first stop string to complete, and
        its token ids end with the token that completed it.
        """
        if return_signals:
            raise ValueError("llama.cpp gives no attention weights: MIND's signals come from the transformers "
                             "scorer (`models.lm_config.WithSignals`)")
        encoded = [self.encode(p) for p in prompts]
        for ids in encoded:
            if len(ids) + max_new_tokens > self.n_ctx:
                raise ValueError(f"a prompt of {len(ids)} tokens plus {max_new_tokens} new ones exceeds the llama.cpp "
                                 f"context of {self.n_ctx} tokens (raise n_ctx)")
        results: list[Generation | None] = [None] * len(prompts)
        order = sorted(range(len(prompts)), key=prompts.__getitem__)  # neighbours share their longest prefix
        with tqdm(total=len(prompts), desc="generate", unit="prompt", disable=not show_progress, leave=False) as bar:
            for group in self._groups(order, encoded, max_new_tokens, min(batch_size, self.max_sequences)):
                finished = self._generate_group([encoded[i] for i in group], max_new_tokens, stop or [],
                                                stop_repeated_lines)
                for i, sequence in zip(group, finished):
                    results[i] = Generation(text=sequence.text, prompt_tokens=len(sequence.prompt),
                                            new_tokens=len(sequence.out), token_ids=sequence.out)
                bar.update(len(group))
        return results

    def _groups(self, order: list[int], encoded: list[list[int]], max_new_tokens: int, size: int):
        """Consecutive prompts, at most `size` together, whose shared prefix, own tokens and new
        tokens fit in the KV cache."""
        group: list[int] = []
        shared = 0
        for i in order:
            ids = encoded[i]
            candidate = min(shared, common_prefix(encoded[group[0]], ids), len(ids) - 1) if group else len(ids) - 1
            need = candidate + sum(len(encoded[j]) - candidate + max_new_tokens for j in [*group, i])
            if group and (len(group) == size or need > self.n_ctx):
                yield group
                group, candidate = [], len(ids) - 1
            group.append(i)
            shared = candidate
        if group:
            yield group

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
                raise RuntimeError(f"llama_decode failed with status {status} (1: the KV cache of {self.n_ctx} "
                                   "tokens is full; raise n_ctx)")
            for j, (*_, logits) in enumerate(part):
                if logits:
                    row = llama_cpp.llama_get_logits_ith(self._ctx.ctx, j)
                    values = np.ctypeslib.as_array(ctypes.cast(row, ctypes.POINTER(ctypes.c_float)),
                                                   shape=(self._n_vocab,))
                    chosen.append(int(values.argmax()))
        return chosen

    def _share_prefix(self, prompts: list[list[int]]) -> int:
        """Put the prompts' common prefix (all but each prompt's last token) in sequence PREFIX,
        decoding only what it did not hold yet, and share it with sequences 1..n."""
        shared = min(len(p) - 1 for p in prompts)
        for p in prompts[1:]:
            shared = common_prefix(prompts[0][:shared], p)
        prefix = prompts[0][:shared]
        for sequence in range(1, self.max_sequences + 1):
            llama_cpp.llama_memory_seq_rm(self._memory, sequence, -1, -1)
        kept = common_prefix(self._prefix, prefix)
        llama_cpp.llama_memory_seq_rm(self._memory, PREFIX, kept, -1)
        self._prefix = self._prefix[:kept]
        self._decode([(t, kept + k, PREFIX, False) for k, t in enumerate(prefix[kept:])])
        self._prefix = prefix
        for sequence in range(1, len(prompts) + 1):
            llama_cpp.llama_memory_seq_cp(self._memory, PREFIX, sequence, 0, shared)
        return shared

    def _generate_group(self, prompts: list[list[int]], max_new_tokens: int, stop: list[str],
                        stop_repeated_lines: bool) -> list[_Sequence]:
        sequences = [_Sequence(p) for p in prompts]
        if max_new_tokens <= 0:
            return sequences
        shared = self._share_prefix(prompts)
        feed = [(t, shared + k, s, k == len(p) - shared - 1)
                for s, p in enumerate(prompts, start=1) for k, t in enumerate(p[shared:])]
        active = list(range(len(sequences)))
        while active:
            for index, token in zip(active, self._decode(feed), strict=True):
                self._accept(sequences[index], token, max_new_tokens, stop, stop_repeated_lines)
            active = [i for i in active if not sequences[i].done]
            feed = [(sequences[i].out[-1], len(sequences[i].prompt) + len(sequences[i].out) - 1, i + 1, True)
                    for i in active]
        return sequences

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
