"""An LM too large for the machine is refused in one line before it loads (models/lm/fits.py)."""

import pytest
import torch

from core.config import ConfigError
from models.lm import fits
from models.lm.fits import GIB, kv_cache_bytes, require_fit, weights_bytes
from conftest import tiny_causal_lm

QWEN_05B = {"general.architecture": "qwen2", "qwen2.block_count": "24", "qwen2.attention.head_count": "14",
            "qwen2.attention.head_count_kv": "2", "qwen2.embedding_length": "896"}  # the packaged GGUF's metadata


def free_memory(monkeypatch, n: int) -> None:
    monkeypatch.setattr(fits, "available_memory", lambda device="cpu": n)


def test_what_exceeds_the_free_memory_is_refused_naming_its_parts_and_the_change(monkeypatch):
    free_memory(monkeypatch, GIB)
    require_fit("m", {"weights": GIB // 2, "KV caches": GIB // 2}, "lower x")  # exactly fits
    with pytest.raises(ConfigError, match=r"^lm m needs about 1\.25 GiB \(weights 0\.50, KV caches 0\.75\) and cpu "
                                          r"has 1\.00 GiB free: lower x$"):
        require_fit("m", {"weights": GIB // 2, "KV caches": 3 * GIB // 4}, "lower x")


def test_the_kv_cache_of_the_packaged_model_is_its_layers_kv_heads_and_head_size_in_float16():
    # 24 layers x 2 KV heads x (64 key + 64 value dims) x 2 bytes = 12 KiB a position
    assert kv_cache_bytes(QWEN_05B, 1) == 24 * 2 * 128 * 2 == 12288
    assert kv_cache_bytes(QWEN_05B, 8 * 4096) == 12288 * 32768
    grouped = QWEN_05B | {"qwen2.attention.key_length": "128", "qwen2.attention.value_length": "96"}
    assert kv_cache_bytes(grouped, 1) == 24 * 2 * 224 * 2


def test_weights_are_their_files_scaled_to_the_dtype_they_load_in(tmp_path, tiny_lm_tokenizer):
    tiny_causal_lm(tiny_lm_tokenizer).save_pretrained(tmp_path)  # float32 safetensors
    size = sum(f.stat().st_size for f in tmp_path.glob("*.safetensors"))
    assert weights_bytes(tmp_path, "float32") == size
    assert weights_bytes(tmp_path, "bfloat16") == size // 2
    assert weights_bytes(tmp_path / "missing", "float32") is None  # a hub id: nothing to measure


def test_a_transformers_model_too_large_is_refused_before_it_loads(tmp_path, tiny_lm_tokenizer, monkeypatch):
    from models.lm import transformers_backend

    tiny_causal_lm(tiny_lm_tokenizer).save_pretrained(tmp_path)
    tiny_lm_tokenizer.save_pretrained(tmp_path)
    monkeypatch.setattr(transformers_backend, "from_pretrained", lambda *a, **k: pytest.fail("loaded anyway"))
    free_memory(monkeypatch, 1024)
    with pytest.raises(ConfigError, match=r"on transformers \(float32\) needs about .* and cpu has 0\.00 GiB free: "
                                          r"set lm.dtype bfloat16, use a smaller model or the llama_cpp backend$"):
        transformers_backend.CausalLM(str(tmp_path), device="cpu")
    monkeypatch.undo()
    assert transformers_backend.CausalLM(str(tmp_path), device="cpu").model.dtype == torch.float32  # fits: loads


@pytest.mark.integration
def test_llama_cpp_refuses_kv_caches_that_do_not_fit_naming_slots_and_context(monkeypatch):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (`make install` builds it)")
    from models.lm.llama_cpp_backend import LlamaCppLM
    from models.packaged import resolve_gguf

    try:
        gguf = resolve_gguf("qwen2.5-coder-0.5b-instruct")
    except ImportError as err:
        pytest.skip(str(err))
    free_memory(monkeypatch, GIB)  # the 0.49 GB weights fit, 8 x 32768 positions (3 GiB) do not
    with pytest.raises(ConfigError, match=r"KV caches 3\.00\) and cpu has 1\.00 GiB free: lower lm.parallel \(8 "
                                          r"slots\) or lm.n_ctx \(32768 tokens a slot\)$"):
        LlamaCppLM(gguf, n_ctx=32768, parallel=8)
    free_memory(monkeypatch, 1024)
    with pytest.raises(ConfigError, match=r"needs about 0\.\d\d GiB \(weights 0\.\d\d\) .*: use a smaller GGUF"):
        LlamaCppLM(gguf)
