"""Choosing and loading the LM from a config: the backend, lazy loading, and MIND's signals for
backends that do not expose them.

- `transformers` (`CausalLM`): float32 or bfloat16 weights (the packaged GGUF, dequantised once);
  gives the signals itself.
- `llama_cpp` (`LlamaCppLM`): the GGUF as it is (q4), on every core; the fast CPU backend.
- `vllm` (`VllmLM`): GPU machines, with the `vllm` extra.
- `auto` (the default): vllm with a CUDA GPU and vLLM installed, else llama_cpp when
  llama-cpp-python is installed and the model is a GGUF (the packaged one is), else transformers.
  llama_cpp became the CPU default on benchmarks/results/lm_backends.md: on the same inputs its
  outputs matched transformers' about as well as q4 rounding allows (62% identical triples at the
  same precision and recall against gpt-3.5, 90% identical reader answers, 95% identical Constructor
  choices), 3.3x as fast for extraction, 2.6x for the reader, 3.8x for the Constructor and 2.8x for
  MIND.

MIND needs each generated token's entropy over the full vocabulary and the attention it receives,
which llama.cpp and vLLM do not expose: `WithSignals` generates with the fast backend, then takes
the signals from one transformers forward pass over prompt + generated tokens (teacher forcing),
loading that scorer only when signals are first asked for.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import torch

from core.config import ConfigError, require_positive
from models.lm.chat import Message
from models.lm.interface import Generation, LanguageModel
from models.lm.transformers_backend import CausalLM
from models.packaged import PACKAGED_QWEN, resolve_gguf, resolve_lm

Backend = Literal["auto", "transformers", "llama_cpp", "vllm"]


@dataclass
class LMConfig:
    """The LM of extraction, the Constructor, the reader and MIND, as configured from YAML."""

    name: str = "qwen2.5-coder-0.5b-instruct"
    """a packaged short name, a folder, a `.gguf` file or a hub id"""
    gguf_file: str | None = None
    """the GGUF file inside the folder or hub repository `name`"""
    backend: Backend = "auto"
    """`transformers`, `llama_cpp` (a GGUF on the CPU), `vllm` (GPU) or `auto` (see models/lm/config.py)"""
    dtype: Literal["float32", "bfloat16"] = "float32"
    """transformers: weights and compute type (bfloat16 is slower on CPUs without native support)"""
    device: str = "auto"
    """transformers: `auto` (CUDA when present), `cpu`, `cuda` or `cuda:N`"""
    threads: int | None = None
    """llama_cpp: CPU threads; null: every core"""
    n_ctx: int = 4096
    """llama_cpp and vllm: the context of one sequence, prompt and output together, in tokens"""
    parallel: int = 8
    """llama_cpp: the most sequences decoded together (each holds a KV cache of n_ctx tokens)"""

    def __post_init__(self) -> None:
        require_positive(self, "threads", "n_ctx", "parallel")

    def resolved_backend(self) -> str:
        if self.backend != "auto":
            return self.backend
        if torch.cuda.is_available() and importlib.util.find_spec("vllm") is not None:
            return "vllm"
        is_gguf = self.name.lower() in PACKAGED_QWEN or self.name.endswith(".gguf") or bool(self.gguf_file)
        return "llama_cpp" if is_gguf and importlib.util.find_spec("llama_cpp") is not None else "transformers"

    def transformers(self) -> CausalLM:
        """The model as a transformers `CausalLM` (the generator of that backend, and every backend's scorer)."""
        return CausalLM(self.name, gguf_file=self.gguf_file, dtype=self.dtype, device=self.device)

    def build(self) -> LanguageModel:
        backend = self.resolved_backend()
        if backend == "transformers":
            return self.transformers()
        if backend == "llama_cpp":
            try:
                from models.lm.llama_cpp_backend import LlamaCppLM  # optional: llama-cpp-python builds from source
            except ImportError as error:
                raise ConfigError("lm.backend", "llama_cpp needs llama-cpp-python: `make install` builds it, or "
                                                "`pip install llama-cpp-python`") from error
            return WithSignals(LlamaCppLM(resolve_gguf(self.name, self.gguf_file), self.n_ctx, self.threads,
                                          self.parallel), self)
        from models.lm.vllm_backend import VllmLM  # optional: the `vllm` extra, GPU machines only

        path, gguf = resolve_lm(self.name, self.gguf_file)
        return WithSignals(VllmLM(f"{path}/{gguf}" if gguf else path, max_model_len=self.n_ctx), self)


class WithSignals:
    """A fast generator whose MIND signals come from the transformers model of the same weights."""

    def __init__(self, generator: LanguageModel, config: LMConfig) -> None:
        self.generator, self.config = generator, config

    @cached_property
    def scorer(self) -> CausalLM:
        return self.config.transformers()

    @property
    def context_length(self) -> int | None:
        return self.generator.context_length

    def format_chat(self, messages: list[Message]) -> str:
        return self.generator.format_chat(messages)

    def encode(self, prompt: str) -> list[int]:
        return self.generator.encode(prompt)

    def chat(self, conversations: list[list[Message]], **generate_kwargs) -> list[Generation]:
        return self.generate([self.format_chat(c) for c in conversations], **generate_kwargs)

    def generate(self, prompts: list[str], return_signals: bool = False, **kwargs) -> list[Generation]:
        generations = self.generator.generate(prompts, **kwargs)
        if return_signals:
            prompt_ids = [self.scorer.encode(p) for p in prompts]
            for g, signals in zip(generations, self.scorer.token_signals(prompt_ids, [g.token_ids for g in generations])):
                g.signals = signals
        return generations


class LazyLM:
    """Stands in for `config.build()` and loads the model on first use, so a run that never
    generates (KiRAG in Aligner-only mode over a complete KG) never pays for loading it."""

    def __init__(self, config: LMConfig) -> None:
        self.config = config

    @cached_property
    def lm(self) -> LanguageModel:
        return self.config.build()

    def __getattr__(self, name: str):  # called only for what LazyLM itself lacks: chat, generate, ...
        return getattr(self.lm, name)
