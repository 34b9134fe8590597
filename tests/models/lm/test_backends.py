"""Choosing the LM backend, and the llama.cpp / vLLM backends (integration: the packaged GGUF; vLLM only
on a CUDA machine with the `vllm` extra)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from core.config import ConfigError
from models.lm.config import LMConfig, WithSignals
from models.lm.interface import Slots, common_prefix, repeats_a_line
from models.packaged import resolve_gguf


@pytest.mark.parametrize("name, gguf_file, cuda, installed, expected", [
    ("qwen2.5-coder-0.5b-instruct", None, False, {"llama_cpp"}, "llama_cpp"),
    ("model.gguf", None, False, {"llama_cpp"}, "llama_cpp"),
    ("some/folder", "m.gguf", False, {"llama_cpp"}, "llama_cpp"),
    ("some/folder", None, False, {"llama_cpp"}, "transformers"),  # not a GGUF: llama.cpp cannot load it
    ("qwen2.5-coder-0.5b-instruct", None, False, set(), "transformers"),
    ("qwen2.5-coder-0.5b-instruct", None, True, {"llama_cpp", "vllm"}, "vllm"),
    ("qwen2.5-coder-0.5b-instruct", None, False, {"llama_cpp", "vllm"}, "llama_cpp"),  # vLLM needs CUDA
])
def test_auto_backend(monkeypatch, name, gguf_file, cuda, installed, expected):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(importlib.util, "find_spec", lambda mod: object() if mod in installed else None)
    assert LMConfig(name, gguf_file=gguf_file, backend="auto").resolved_backend() == expected
    assert LMConfig(name, backend="transformers").resolved_backend() == "transformers"


def test_a_backend_that_is_not_installed_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "models.lm.llama_cpp_backend", None)  # makes the import fail
    with pytest.raises(ConfigError, match="lm.backend llama_cpp needs llama-cpp-python: `make install` builds it"):
        LMConfig(backend="llama_cpp").build()


def test_lm_settings_out_of_range_are_refused():
    with pytest.raises(ConfigError, match="n_ctx must be at least 1"):
        LMConfig(n_ctx=0)


def test_a_prompt_goes_to_the_free_slot_that_loses_least_and_reuses_any_slots_prefix_but_its_last_token():
    slots = Slots(4)
    for slot, tokens in enumerate([[1, 2, 3, 4, 5, 6], [1, 2, 9], [7, 8], [1, 2, 3]]):
        slots.hold(slot, tokens)
    prompt = [1, 2, 3, 4, 9]
    # slot 0 shares the most but would lose 2 tokens; slot 3 shares 3 and loses none (slot 1 would lose 1)
    assert slots.choose([0, 1, 2, 3], prompt) == 3
    assert slots.choose([0, 1, 2], prompt) == 1
    assert slots.reused(prompt) == (0, 4)  # copied from slot 0, busy or not
    assert slots.reused([1, 2, 3, 4]) == (0, 3)  # all held, but the last token is decoded for its logits
    assert slots.reused([8]) == (0, 0)
    slots.forget()
    assert slots.choose([0, 1, 2, 3], prompt) == 0  # all empty: the least recently used
    slots.hold(0, prompt)
    assert slots.choose([0, 1, 2, 3], [5]) == 1


def test_interleaved_prompt_families_keep_a_slot_each():
    slots, system, entity = Slots(4), list(range(100, 400)), list(range(500, 560))
    decoded = 0
    for question in range(3):  # MIND's order: a sentence, then the entity prompt, then the sentence again
        for prompt in (system + [question], entity + [question], system + [question, 1]):
            slot = slots.choose(list(range(4)), prompt)
            decoded += len(prompt) - slots.reused(prompt)[1]
            slots.hold(slot, prompt)
    assert decoded == len(system) + len(entity) + 3 * 3  # each instruction once, then one token a prompt


# --- llama.cpp on the packaged GGUF ---------------------------------------------------------------


@pytest.fixture(scope="module")
def gguf():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (`make install` builds it)")
    try:
        return resolve_gguf("qwen2.5-coder-0.5b-instruct")
    except ImportError as err:
        pytest.skip(str(err))


@pytest.fixture(scope="module")
def llama(gguf):
    from models.lm.llama_cpp_backend import LlamaCppLM

    return LlamaCppLM(gguf, n_ctx=1024)


CHATS = [[{"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "The capital of France?"}],
         [{"role": "user", "content": "The capital of Italy? One word."}]]


@pytest.mark.integration
def test_llama_prompts_and_tokens_equal_transformers(llama, gguf):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    for chat in CHATS:
        prompt = llama.format_chat(chat)
        assert prompt == tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
        assert llama.encode(prompt) == tokenizer(prompt)["input_ids"]


@pytest.mark.integration
def test_llama_generates_greedily_in_input_order_with_stops(llama):
    prompts = [llama.format_chat(c) for c in CHATS]
    first = llama.generate(prompts, max_new_tokens=12)
    assert "Paris" in first[0].text and "Rome" in first[1].text
    assert [g.text for g in llama.generate(prompts[::-1], max_new_tokens=12)] == [g.text for g in first[::-1]]
    assert all(g.new_tokens == len(g.token_ids) > 0 and g.prompt_tokens > 10 for g in first)
    cut = llama.generate(prompts[:1], max_new_tokens=12, stop=["ari"])[0]
    assert cut.text == first[0].text[: first[0].text.index("ari")] and cut.new_tokens <= first[0].new_tokens


@pytest.mark.integration
def test_llama_decodes_sequences_together_and_reuses_what_a_slot_holds(llama, monkeypatch):
    system = {"role": "system", "content": "You are a geography teacher. Answer every question in one word."}
    prompts = [llama.format_chat([system, {"role": "user", "content": f"The capital of {country}?"}])
               for country in ("France", "Italy", "Spain", "Japan", "Egypt")]
    alone = [llama.generate([p], max_new_tokens=12, batch_size=1)[0].text for p in prompts]
    decoded, started = [], []
    decode, start = llama._decode, llama._start
    monkeypatch.setattr(llama, "_decode", lambda tokens: decoded.append(tokens) or decode(tokens))
    monkeypatch.setattr(llama, "_start", lambda slot, prompt: started.append(start(slot, prompt)) or started[-1])
    llama.forget()
    counted = llama.prompt_tokens_decoded
    together = llama.generate(prompts, max_new_tokens=12, batch_size=3)
    assert [g.text for g in together] == alone
    slots = [{slot for _, _, slot, _ in call} for call in decoded]
    assert max(map(len, slots)) == 3  # three sequences at once, no more (in any of the slots)
    # the shared prefix is decoded once, then copied to the slot of every other prompt
    ids = [llama.encode(p) for p in prompts]
    shared = min(common_prefix(ids[0], i) for i in ids)
    assert shared > 20 and sum(map(len, started)) == shared + sum(len(i) - shared for i in ids)
    assert llama.prompt_tokens_decoded - counted == sum(map(len, started))  # the counter a benchmark reads
    started.clear()
    assert [g.text for g in llama.generate(prompts, max_new_tokens=12, batch_size=3)] == alone
    assert sum(map(len, started)) <= sum(len(i) - shared for i in ids)  # now every slot starts from it


@pytest.mark.integration
def test_llama_stops_at_a_repeated_line(llama):
    from datamodules.loaders import DataConfig
    from kg.prompt import build_prompt, load_demos

    # The extraction prompt of the demo's first passage: the small LM loops on one triple there.
    chat = build_prompt(DataConfig().load().passages[0], load_demos()[:2])
    looping = llama.chat([chat], max_new_tokens=200)[0]
    cut = llama.chat([chat], max_new_tokens=200, stop_repeated_lines=True)[0]
    lines = [line.strip() for line in looping.text.split("\n") if line.strip()]
    assert len(lines) > len(set(lines))  # it does loop without the stop
    kept = [line.strip() for line in cut.text.split("\n") if line.strip()]
    assert cut.new_tokens < looping.new_tokens and len(kept) == len(set(kept)) + 1  # it ends at the first repeat
    assert looping.text.startswith(cut.text)


@pytest.mark.integration
def test_llama_refuses_what_it_cannot_do(llama):
    with pytest.raises(ValueError, match="exceeds the llama.cpp context of 1024 tokens"):
        llama.generate(["word " * 1100], max_new_tokens=8)
    with pytest.raises(ValueError, match="no attention weights"):
        llama.generate(["hi"], max_new_tokens=2, return_signals=True)


@pytest.mark.integration
def test_llama_backend_gives_mind_signals_through_the_transformers_scorer(gguf):
    lm = LMConfig(backend="llama_cpp", n_ctx=1024).build()
    assert isinstance(lm, WithSignals)
    g = lm.chat(CHATS[:1], max_new_tokens=6, return_signals=True)[0]
    assert len(g.signals.pieces) == len(g.signals.entropy) == len(g.signals.max_attention) == g.new_tokens > 0
    assert g.signals.entropy.isfinite().all() and (g.signals.entropy >= 0).all()
    assert "".join(g.signals.pieces).strip() and g.signals.max_attention[-1] == 0


@pytest.mark.integration
def test_a_process_that_used_llama_exits_without_a_teardown_traceback(gguf):
    """Llama's own __del__ ran after the interpreter had unloaded llama_cpp and printed a TypeError."""
    code = ("import sys; sys.path.insert(0, '.'); from models.lm.config import LMConfig; "
            "lm = LMConfig(backend='llama_cpp', n_ctx=256, parallel=1).build(); "
            "lm.chat([[{'role': 'user', 'content': 'Hi'}]], max_new_tokens=2)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[3])
    assert done.returncode == 0, done.stderr
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr, done.stderr


# --- vLLM -----------------------------------------------------------------------------------------


@pytest.mark.integration
def test_vllm_generates_like_the_other_backends():
    pytest.importorskip("vllm", reason="vLLM is not installed (the `vllm` extra, GPU machines only)")
    if not torch.cuda.is_available():
        pytest.skip("vLLM needs a CUDA GPU")
    from models.lm.vllm_backend import VllmLM
    from models.packaged import packaged_qwen_path

    lm = VllmLM(str(packaged_qwen_path()), max_model_len=1024)
    first = lm.chat(CHATS, max_new_tokens=12)
    assert "Paris" in first[0].text and "Rome" in first[1].text
    chat = [{"role": "user", "content": "Write the line <a; b; c> ten times, one per line, and nothing else."}]
    cut = lm.chat([chat], max_new_tokens=80, stop_repeated_lines=True)[0]
    assert [line.strip() for line in cut.text.split("\n") if line.strip()].count("<a; b; c>") == 2


def test_a_repeated_line_counts_only_once_it_is_complete():
    assert repeats_a_line("<a; b; c>\n<d; e; f>\n<a; b; c>\n")
    assert not repeats_a_line("<a; b; c>\n<a; b; c>")  # the second is still being written
    assert not repeats_a_line("<a; b; c>\n\n\n<d; e; f>\n")  # empty lines are no repeats
