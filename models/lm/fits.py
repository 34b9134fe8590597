"""Whether an LM fits in memory, asked before it is loaded: a model too large for the machine gets a
one-line error naming what to change, instead of the kernel killing the process mid-load.

Estimates, not measurements: weights by their files (scaled to the dtype they load in), llama.cpp's
KV caches by the GGUF's shapes (float16 keys and values, as llama.cpp keeps them). Compute buffers
are left out, so a model refused would not have fit.
"""

from __future__ import annotations

import json
from pathlib import Path

import psutil
import torch

from core.config import ConfigError

GIB = 2**30
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}


def available_memory(device: str = "cpu") -> int:
    """Bytes free for a model on `device`: a CUDA device's free memory, else the system's available RAM."""
    if device.startswith("cuda"):
        free, _ = torch.cuda.mem_get_info(torch.device(device))
        return free
    return psutil.virtual_memory().available


def require_fit(what: str, needs: dict[str, int], change: str, device: str = "cpu") -> None:
    """Refuse `what` when the parts it `needs` (name: bytes) exceed what `device` has free; `change`
    says which settings would make it fit."""
    total, free = sum(needs.values()), available_memory(device)
    if total > free:
        parts = ", ".join(f"{name} {n / GIB:.2f}" for name, n in needs.items())
        raise ConfigError("lm", f"{what} needs about {total / GIB:.2f} GiB ({parts}) and {device} has "
                                f"{free / GIB:.2f} GiB free: {change}")


def weights_bytes(folder: str | Path, dtype: str) -> int | None:
    """The bytes of a local transformers folder's weights once loaded in `dtype` (its files scaled from
    the dtype its config stores them in); None when the folder is not local or holds no weights files."""
    folder = Path(folder)
    files = [*folder.glob("*.safetensors"), *folder.glob("*.bin")] if folder.is_dir() else []
    if not files:
        return None
    config = folder / "config.json"
    stored = json.loads(config.read_text()) if config.is_file() else {}
    stored = stored.get("dtype") or stored.get("torch_dtype") or dtype
    return sum(f.stat().st_size for f in files) * DTYPE_BYTES[dtype] // DTYPE_BYTES.get(stored, DTYPE_BYTES[dtype])


def kv_cache_bytes(metadata: dict[str, str], tokens: int) -> int:
    """llama.cpp's float16 keys and values of `tokens` positions, from a GGUF's metadata."""
    arch = metadata["general.architecture"]
    layers, heads = int(metadata[f"{arch}.block_count"]), int(metadata[f"{arch}.attention.head_count"])
    kv_heads = int(metadata.get(f"{arch}.attention.head_count_kv", heads))
    embedding = int(metadata[f"{arch}.embedding_length"])
    key = int(metadata.get(f"{arch}.attention.key_length", embedding // heads))
    value = int(metadata.get(f"{arch}.attention.value_length", key))
    return layers * kv_heads * (key + value) * 2 * tokens
