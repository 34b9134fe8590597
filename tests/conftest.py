"""Shared fixtures: tiny random models that build in milliseconds and need no files."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
import torch
from transformers import BertConfig, BertModel, BertTokenizerFast

from models.encoder import Encoder

TINY_WORDS = "the of and in is was who what which where when river city born film album band".split()


@pytest.fixture(scope="session")
def tiny_tokenizer() -> BertTokenizerFast:
    """A WordPiece tokenizer whose single-character pieces spell any lowercase ASCII text."""
    chars = string.ascii_lowercase + string.digits
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *string.punctuation, *chars, *("##" + c for c in chars)]
    tokens += TINY_WORDS
    tokenizer = BertTokenizerFast(vocab={t: i for i, t in enumerate(tokens)})
    assert len(tokenizer) == len(tokens)
    return tokenizer


def tiny_bert(vocab_size: int, seed: int = 0) -> BertModel:
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    return BertModel(config, add_pooling_layer=False).eval()


@pytest.fixture
def make_tiny_encoder(tiny_tokenizer):
    """Factory: `make_tiny_encoder(seed=0, **Encoder_kwargs)` gives a fresh random tiny encoder."""

    def make(seed: int = 0, **kwargs) -> Encoder:
        return Encoder(model=tiny_bert(len(tiny_tokenizer), seed), tokenizer=tiny_tokenizer, **kwargs)

    return make


@pytest.fixture
def tiny_encoder(make_tiny_encoder) -> Encoder:
    return make_tiny_encoder()


SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real benchmark slices in ../shared/data; tests that use them skip when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent (the shared benchmark data lives beside the repository)")
    return SHARED_DATA
