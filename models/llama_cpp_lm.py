"""The llama.cpp backend (llama-cpp-python): the packaged q4 GGUF used as it is, on every core.

llama-cpp-python decodes one sequence at a time; prompts are taken in sorted order so that
consecutive ones share the longest prefix (instruction, demonstrations), whose KV cache the binding
keeps and reuses. Decoding is greedy (the argmax of the raw logits) with no repetition penalty, as
in the transformers backend, and the chat template is the GGUF's own, which renders the same text
as transformers' `apply_chat_template` for the packaged model (a test checks it).
"""

from __future__ import annotations

import os
from pathlib import Path

import llama_cpp
from llama_cpp import Llama
from llama_cpp.llama_chat_format import Jinja2ChatFormatter
from tqdm.auto import tqdm

from models.chat import Message
from models.lm import Generation, repeats_a_line, stop_at


class LlamaCppLM:
    """A `LanguageModel` on a GGUF file. `threads=None` uses every core."""

    def __init__(self, gguf: str | os.PathLike, n_ctx: int = 4096, threads: int | None = None) -> None:
        threads = threads or os.cpu_count() or 1
        self.path = Path(gguf)
        self.llm = Llama(model_path=str(self.path), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads,
                         verbose=False)
        meta = self.llm.metadata
        vocab = self.llm._model.vocab
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
        """Greedy continuations of `prompts`, in input order (`batch_size` is not used: one sequence at a time).

        As in the transformers backend, a text ends before the first stop string to complete, and
        its token ids end with the token that completed it.
        """
        if return_signals:
            raise ValueError("llama.cpp gives no attention weights: MIND's signals come from the transformers "
                             "scorer (`models.lm_config.WithSignals`)")
        results: list[Generation | None] = [None] * len(prompts)
        order = sorted(range(len(prompts)), key=prompts.__getitem__)  # neighbours share their longest prefix
        for i in tqdm(order, desc="generate", unit="prompt", disable=not show_progress, leave=False):
            results[i] = self._generate_one(prompts[i], max_new_tokens, stop or [], stop_repeated_lines)
        return results

    def _generate_one(self, prompt: str, max_new_tokens: int, stop: list[str], stop_repeated_lines: bool) -> Generation:
        ids = self.encode(prompt)
        if len(ids) + max_new_tokens > self.llm.n_ctx():
            raise ValueError(f"a prompt of {len(ids)} tokens plus {max_new_tokens} new ones exceeds the llama.cpp "
                             f"context of {self.llm.n_ctx()} tokens (raise n_ctx)")
        out: list[int] = []
        text = ""
        if max_new_tokens > 0:
            for token in self.llm.generate(ids, top_k=1, top_p=1.0, min_p=0.0, temp=0.0, repeat_penalty=1.0):
                if self._is_end(token):
                    break
                out.append(token)
                text = self.llm.detokenize(out).decode("utf-8", errors="replace")
                end = stop_at(text, stop)
                if end is not None:
                    text = text[:end]
                    break
                if stop_repeated_lines and "\n" in self._piece(token) and repeats_a_line(text):
                    break
                if len(out) >= max_new_tokens:
                    break
        return Generation(text=text, prompt_tokens=len(ids), new_tokens=len(out), token_ids=out)
