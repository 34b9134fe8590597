"""A Hugging Face text encoder with pooling, used by the dense retriever and the Aligner."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from tqdm.auto import tqdm
from transformers import AutoModel, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from core.config import ConfigError, require_positive
from models.packaged import from_pretrained, resolve_model_path

Kind = Literal["query", "passage"]
Pooling = Literal["mean", "cls"]


class TextEncoder(Protocol):
    """What retrieval, the triple index and demonstration selection need of an encoder."""

    def encode(self, texts: list[str], kind: Kind = "passage", batch_size: int | None = None,
               show_progress: bool = True) -> np.ndarray: ...

    def fingerprint(self) -> str: ...


@dataclass
class EncoderConfig:
    """An encoder's settings: the one declaration that dense retrieval, the Aligner and its configs share."""

    name: str = "minilm"
    """the model: a packaged short name (`minilm`), a local folder or a hub id"""
    pooling: Pooling = "mean"
    """`mean` over the tokens (MiniLM, E5) or the `cls` token (BGE)"""
    normalize: bool = True
    """L2-normalise the embeddings, so that the inner product is the cosine"""
    query_prefix: str = ""
    """text put before every query (E5: `query: `)"""
    passage_prefix: str = ""
    """text put before every passage or triple (E5: `passage: `)"""
    max_length: int = 256
    """token limit of passages (of triples, for the Aligner)"""
    query_max_length: int | None = None
    """token limit of queries; null: `max_length`"""
    batch_size: int = 64
    """texts per forward pass when embedding many"""
    chunk_tokens: int | None = None
    """padded tokens per model call: the encoder sorts the texts of each call by length and runs them
    in chunks of at most this many tokens (a longer text in a chunk of its own), each padded only to
    its own longest text, so that little work goes to padding; the embeddings are the same (padding
    is masked). null: 512 on CPU, where a call costs about in proportion to its tokens even when
    small (MiniLM training: 256 and 512 alike, 1024 slower), and one call for all texts on other
    devices, whose kernels need large batches (not measured there)"""

    def __post_init__(self) -> None:
        if self.pooling not in ("mean", "cls"):
            raise ConfigError("pooling", f"must be 'mean' or 'cls', got {self.pooling!r}")
        require_positive(self, "max_length", "query_max_length", "batch_size", "chunk_tokens")


class Encoder(nn.Module):
    """Encodes queries and passages into one vector each.

    `forward` keeps gradients (for training); `encode` is the batched, no-grad path for indexing.
    `config` is an `EncoderConfig` or just a model name. Pass `model` and `tokenizer` to wrap
    objects already in memory instead of loading them.
    """

    def __init__(
        self,
        config: EncoderConfig | str = "minilm",
        model: PreTrainedModel | None = None,
        tokenizer: PreTrainedTokenizerBase | None = None,
    ) -> None:
        super().__init__()
        config = EncoderConfig(config) if isinstance(config, str) else config
        if model is None or tokenizer is None:
            path = resolve_model_path(config.name)
            model = model if model is not None else from_pretrained(AutoModel, path)
            tokenizer = tokenizer if tokenizer is not None else from_pretrained(AutoTokenizer, path)
        self.config = config
        self.model = model
        self.tokenizer = tokenizer
        self.prefixes = {"query": config.query_prefix, "passage": config.passage_prefix}
        self.max_lengths = {"query": config.query_max_length or config.max_length, "passage": config.max_length}

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

    @property
    def chunk_tokens(self) -> int | None:
        """Padded tokens per model call (`EncoderConfig.chunk_tokens`, its default resolved for the
        model's device); None: one call for all texts."""
        return self.config.chunk_tokens or (512 if self.device.type == "cpu" else None)

    def _chunks(self, lengths: list[int]) -> list[list[int]]:
        """The texts (by index) of each model call of `forward`: longest first, as many texts a call as fit
        in `chunk_tokens` once padded to the call's first (longest) one, and at least one."""
        budget = self.chunk_tokens
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        if budget is None or len(order) * lengths[order[0]] <= budget:
            return [list(range(len(lengths)))]
        chunks: list[list[int]] = []
        for i in order:
            if not chunks or (len(chunks[-1]) + 1) * lengths[chunks[-1][0]] > budget:
                chunks.append([])
            chunks[-1].append(i)
        return chunks

    def forward(self, texts: list[str], kind: Kind = "passage") -> Tensor:
        """Embed `texts` as a (n, dim) tensor, in input order, keeping gradients.

        The texts are tokenised together, then run through the model in length-sorted chunks of at most
        `chunk_tokens` padded tokens, each cut to its own longest text: padding is masked, so these
        are the embeddings of one call padded to the longest text, with less work spent on padding.
        (A tokenizer that pads on the left gets one call: there, padding moves the tokens' positions.)
        """
        if not texts:
            return next(self.model.parameters()).new_zeros(0, self.dim)
        batch = self.tokenize(texts, kind)
        lengths = batch["attention_mask"].sum(dim=1).tolist()
        # Only padding on the right leaves every real token where it was: on the left, the positions
        # of a text's tokens depend on its padding, so chunks would change the embeddings.
        groups = self._chunks(lengths) if self.tokenizer.padding_side == "right" else [list(range(len(texts)))]
        if len(groups) == 1:
            return self._embed(batch)
        chunks = []
        for group in groups:
            rows = torch.tensor(group, device=self.device)
            chunks.append({name: tensor[rows, : lengths[group[0]]] for name, tensor in batch.items()})
        lookup = self.model.get_input_embeddings()
        if torch.is_grad_enabled() and any(p.requires_grad for p in lookup.parameters()):
            # One token-embedding lookup for all chunks, its output handed to each call by a hook, rather
            # than one lookup a call: the backward of each lookup fills a dense (vocabulary, dim) gradient.
            ids = [chunk["input_ids"] for chunk in chunks]
            words = lookup(torch.cat([i.reshape(-1) for i in ids])).split([i.numel() for i in ids])
            parts = []
            for chunk, vectors in zip(chunks, words):
                hook = lookup.register_forward_hook(lambda module, args, output, v=vectors: v.view(output.shape))
                try:
                    parts.append(self._embed(chunk))
                finally:
                    hook.remove()
        else:
            parts = [self._embed(chunk) for chunk in chunks]
        inverse = torch.empty(len(texts), dtype=torch.long)
        inverse[[i for group in groups for i in group]] = torch.arange(len(texts))
        return torch.cat(parts)[inverse.to(self.device)]

    def _embed(self, batch: dict[str, Tensor]) -> Tensor:
        """One model call on tokenised texts: their pooled (and normalised) embeddings."""
        hidden = self.model(**batch).last_hidden_state
        if self.config.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return F.normalize(pooled, dim=-1) if self.config.normalize else pooled

    @torch.no_grad()
    def encode(
        self, texts: list[str], kind: Kind = "passage", batch_size: int | None = None, show_progress: bool = True
    ) -> np.ndarray:
        """Embed `texts` as a float32 array (n, dim), in input order.

        Texts are batched longest first so that each batch pads to similar lengths.
        """
        was_training = self.training
        self.eval()
        batch_size = batch_size or self.config.batch_size
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
            "pooling": self.config.pooling,
            "normalize": self.config.normalize,
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
