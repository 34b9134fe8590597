"""Shared fixtures: tiny random models that build in milliseconds and need no files."""

from __future__ import annotations

import shutil
import string
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from transformers import BertConfig, BertModel, BertTokenizerFast

from datamodules.loaders import DEMO_DIR
from models.encoder import Encoder, EncoderConfig

TINY_WORDS = "the of and in is was who what which where when river city born film album band".split()


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    """Tiny models run fastest on one thread; on shared, busy cores two threads contend (30x slower)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


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
    """Factory: `make_tiny_encoder(seed=0, **EncoderConfig_kwargs)` gives a fresh random tiny encoder."""

    def make(seed: int = 0, **kwargs) -> Encoder:
        return Encoder(EncoderConfig(**kwargs), model=tiny_bert(len(tiny_tokenizer), seed), tokenizer=tiny_tokenizer)

    return make


@pytest.fixture
def tiny_encoder(make_tiny_encoder) -> Encoder:
    return make_tiny_encoder()


@pytest.fixture
def tiny_model_dir(tmp_path, make_tiny_encoder) -> str:
    """A tiny random BERT saved as a folder, as a user's local model would be."""
    encoder = make_tiny_encoder()
    encoder.model.save_pretrained(tmp_path / "tiny")
    encoder.tokenizer.save_pretrained(tmp_path / "tiny")
    return str(tmp_path / "tiny")


def save_tiny(model, tokenizer, folder) -> str:
    """Save a tiny model and its tokenizer as a local model folder; returns its path."""
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture
def kirag_args(tmp_path, make_tiny_encoder):
    """evaluate.py's flags for KiRAG on 3 demo questions: a tiny random Aligner, a copy of the demo KG
    (`tmp_path/kg`), no extraction."""
    shutil.copytree(DEMO_DIR / "kg", tmp_path / "kg")
    tiny = make_tiny_encoder()
    return ["--method", "kirag", "--aligner.name", save_tiny(tiny.model, tiny.tokenizer, tmp_path / "aligner"),
            "--aligner.cache_dir", str(tmp_path / "emb"), "--kirag.kg", str(tmp_path / "kg"),
            "--kirag.extract_missing", "false", "--kirag.max_steps", "2", "--data.limit", "3",
            "--index.cache_dir", str(tmp_path / "idx")]


SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real benchmark slices in ../shared/data; tests that use them skip when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent (the shared benchmark data lives beside the repository)")
    return SHARED_DATA


TINY_CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TINY_LM_SPECIALS = ["<pad>", "<eos>", "<|im_start|>", "<|im_end|>"]


@pytest.fixture(scope="session")
def tiny_lm_tokenizer():
    """A byte-level tokenizer without merges: one token per byte, so any text round-trips.

    Built from a `tokenizers` object: in transformers 5 some slow-style constructors ignore vocabulary files.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {t: i for i, t in enumerate(TINY_LM_SPECIALS + alphabet)}
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token="<pad>",
        eos_token="<eos>",
        additional_special_tokens=["<|im_start|>", "<|im_end|>"],
        chat_template=TINY_CHAT_TEMPLATE,
    )
    assert len(tokenizer) == len(vocab) == 4 + 256
    return tokenizer


def tiny_causal_lm(tokenizer, seed: int = 0):
    """A random 2-layer Qwen2 model; a large init range makes its predictions and attention far from uniform."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,  # the reader fits its prompts to it: room for its instruction and demo
        initializer_range=0.3,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    return Qwen2ForCausalLM(config).eval()


@pytest.fixture
def make_tiny_lm(tiny_lm_tokenizer):
    """Factory: `make_tiny_lm(seed=0, **CausalLM_kwargs)` wraps a fresh random tiny causal LM."""
    from models.lm.transformers_backend import CausalLM

    def make(seed: int = 0, **kwargs) -> CausalLM:
        return CausalLM(model=tiny_causal_lm(tiny_lm_tokenizer, seed), tokenizer=tiny_lm_tokenizer, **kwargs)

    return make


@pytest.fixture
def tiny_lm(make_tiny_lm):
    return make_tiny_lm()


def _run_rank(rank: int, worker, init_file: str, out_dir: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=2)
    try:
        torch.save(worker(rank), f"{out_dir}/rank{rank}.pt")
    finally:
        dist.destroy_process_group()


@pytest.fixture(scope="session")
def spawn_two_ranks(tmp_path_factory):
    """Run `worker(rank) -> results` in 2 processes joined in a gloo process group (one torch thread
    each); returns the two ranks' results."""
    def spawn(worker) -> list:
        folder = tmp_path_factory.mktemp("ranks")
        mp.spawn(_run_rank, args=(worker, str(folder / "init"), str(folder)), nprocs=2, join=True)
        return [torch.load(folder / f"rank{r}.pt") for r in range(2)]
    return spawn
