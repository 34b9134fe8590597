"""The vLLM backend for GPU machines (the optional `vllm` extra): continuous batching of every prompt
of a call, greedy, with stop strings; a repeated line is cut after generation (vLLM has no stopping
callback), so the text matches the other backends while the tokens after it are wasted work."""

from __future__ import annotations

from typing import Any

from models.lm.chat import Message
from models.lm.interface import Generation, repeats_a_line


def _cut_at_repeated_line(text: str, ids: list[int], decode) -> tuple[str, list[int]]:
    """The shortest prefix of the generated tokens whose text completes a repeated line."""
    for k in range(1, len(ids) + 1):
        prefix = decode(ids[:k])
        if prefix.endswith("\n") and repeats_a_line(prefix):
            return prefix, ids[:k]
    return text, ids


class VllmLM:
    """A `LanguageModel` on vLLM: `name_or_path` is a transformers folder or hub id (or a GGUF file)."""

    def __init__(self, name_or_path: str, dtype: str = "bfloat16", gpu_memory_utilization: float = 0.85,
                 max_model_len: int = 8192, **kwargs: Any) -> None:
        try:
            from vllm import LLM, SamplingParams  # optional: installed with the `vllm` extra on GPU machines
        except ImportError as error:
            raise ImportError("the vllm backend needs vLLM and a CUDA GPU: pip install -e '.[vllm]'") from error
        self._sampling = SamplingParams
        self.llm = LLM(model=name_or_path, dtype=dtype, gpu_memory_utilization=gpu_memory_utilization,
                       max_model_len=max_model_len, **kwargs)
        self.tokenizer = self.llm.get_tokenizer()
        self.context_length = max_model_len

    def encode(self, prompt: str) -> list[int]:
        return self.tokenizer.encode(prompt)

    def format_chat(self, messages: list[Message]) -> str:
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def chat(self, conversations: list[list[Message]], **generate_kwargs) -> list[Generation]:
        return self.generate([self.format_chat(c) for c in conversations], **generate_kwargs)

    def generate(self, prompts: list[str], max_new_tokens: int = 256, batch_size: int = 8, stop: list[str] | None = None,
                 stop_repeated_lines: bool = False, return_signals: bool = False,
                 show_progress: bool = False) -> list[Generation]:
        """Greedy continuations of `prompts`, in input order; vLLM schedules all of them at once."""
        if return_signals:
            raise ValueError("vLLM gives no attention weights: MIND's signals come from the transformers scorer "
                             "(`models.lm.config.WithSignals`)")
        params = self._sampling(temperature=0.0, max_tokens=max_new_tokens, stop=stop or None, logprobs=0,
                                repetition_penalty=1.0)
        outputs = self.llm.generate(prompts, params, use_tqdm=show_progress)
        decode = lambda ids: self.tokenizer.decode(ids, skip_special_tokens=True)
        generations = []
        for output in outputs:
            completion = output.outputs[0]
            text, ids = completion.text, list(completion.token_ids)
            if stop_repeated_lines:
                text, ids = _cut_at_repeated_line(text, ids, decode)
            logprobs = [step[t].logprob for step, t in zip(completion.logprobs, ids)] if completion.logprobs else None
            generations.append(Generation(text=text, prompt_tokens=len(output.prompt_token_ids), new_tokens=len(ids),
                                          token_ids=ids, logprobs=logprobs))
        return generations
