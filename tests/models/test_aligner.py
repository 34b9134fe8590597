"""AlignerModule: its encoder settings, embedding layout, loss, validation metrics, optimizer groups, LoRA."""

import inspect
from dataclasses import asdict
from types import SimpleNamespace

import pytest
import torch
from torch import nn

from datamodules.aligner_datamodule import collate
from models.aligner import AlignerModule
from models.encoder import EncoderConfig

def aligner(model_dir: str, **kwargs) -> AlignerModule:
    """An Aligner over the saved tiny model, with the default lengths: 64 tokens for triples, 256 for queries."""
    return AlignerModule(EncoderConfig(name=model_dir, max_length=64, query_max_length=256), **kwargs)


def test_encoder_settings_are_kept_as_a_plain_dict_and_rebuilt_from_it(tiny_model_dir):
    config = EncoderConfig(name=tiny_model_dir, pooling="cls", query_prefix="query: ", passage_prefix="passage: ",
                           max_length=32, query_max_length=128)
    module = AlignerModule(config, temperature=0.05)
    assert module.hparams.encoder == asdict(config) and type(module.hparams.encoder) is dict
    assert module.encoder.config == config
    assert module.encoder.prefixes == {"query": "query: ", "passage": "passage: "}
    assert module.encoder.max_lengths == {"query": 128, "passage": 32}
    again = AlignerModule(**module.hparams)  # as load_from_checkpoint does
    assert again.encoder.config == config and again.hparams.temperature == 0.05
    default = inspect.signature(AlignerModule).parameters["encoder"].default
    assert (default.name, default.max_length, default.query_max_length) == ("minilm", 64, 256)


def a_batch() -> dict:
    examples = [
        {"index": 0, "question_id": "q0", "query": "who is the band", "positive": "<band; formed in; city>",
         "negatives": ["<band; released; album>", "<river; in; city>"]},
        {"index": 1, "question_id": "q1", "query": "which river", "positive": "<river; in; city>", "negatives": []},
        {"index": 2, "question_id": "q2", "query": "what film", "positive": "<film; by; band>",
         "negatives": ["<film; is; film>"]},
    ]
    return collate(examples)


def test_embed_lays_out_negatives_by_mask(tiny_model_dir):
    module = aligner(tiny_model_dir).eval()
    batch = a_batch()
    with torch.no_grad():
        queries, positives, negatives, mask = module.embed(batch)
        alone = module.encoder(["<river; in; city>", "<film; is; film>"], "passage")
    assert queries.shape == positives.shape == (3, 32) and negatives.shape == (3, 2, 32)
    assert mask.tolist() == [[True, True], [False, False], [True, False]]
    torch.testing.assert_close(negatives[0, 1], alone[0])  # the same text as positive 1: embedded once
    torch.testing.assert_close(positives[1], alone[0])
    torch.testing.assert_close(negatives[2, 0], alone[1])
    assert negatives[1].abs().sum() == 0 and negatives[2, 1].abs().sum() == 0


def test_training_step_gives_a_finite_loss_with_gradients(tiny_model_dir):
    module = aligner(tiny_model_dir, temperature=0.05)
    loss = module.training_step(a_batch(), 0)
    loss.backward()
    assert torch.isfinite(loss) and loss > 0
    grads = [p.grad for p in module.encoder.model.encoder.parameters()]
    assert all(g is not None for g in grads) and any(g.abs().sum() > 0 for g in grads)
    assert all(p.grad is None for p in module.encoder.model.pooler.parameters())  # frozen, unused


def test_validation_ranks_each_positive_among_its_own_candidates(tiny_model_dir, monkeypatch):
    module = aligner(tiny_model_dir)
    q = torch.tensor([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    pos = torch.tensor([[0.9, 0.1], [0.0, 1.0], [1.0, 0.0]])
    negs = torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[5.0, 5.0], [9.0, 0.0]], [[0.5, 0.5], [9.0, 0.0]]])
    mask = torch.tensor([[True, True], [False, False], [True, False]])
    monkeypatch.setattr(module, "embed", lambda batch: (q, pos, negs, mask))
    module.validation_step(a_batch(), 0)
    results = {k: float(v) for k, v in module.val_metrics.compute().items()}
    # Ranks of the positives: 2nd of 3; 1st of 1 (its negatives are padding); 1st of 2.
    assert results == pytest.approx({"val/mrr": (0.5 + 1 + 1) / 3, "val/r@1": 2 / 3, "val/r@5": 1.0})


def test_no_weight_decay_on_biases_and_norms_and_linear_warmup(tiny_model_dir):
    module = aligner(tiny_model_dir, lr=1e-3, weight_decay=0.01, warmup_ratio=0.1)
    module.trainer = SimpleNamespace(estimated_stepping_batches=100)
    config = module.configure_optimizers()
    optimizer, scheduler = config["optimizer"], config["lr_scheduler"]["scheduler"]
    assert config["lr_scheduler"]["interval"] == "step"
    decay, no_decay = optimizer.param_groups
    assert (decay["weight_decay"], no_decay["weight_decay"]) == (0.01, 0.0)
    expected_no_decay = {
        id(p) for m in module.modules() for n, p in m.named_parameters(recurse=False)
        if n == "bias" or isinstance(m, nn.LayerNorm)
    } - {id(p) for p in module.encoder.model.pooler.parameters()}
    assert {id(p) for p in no_decay["params"]} == expected_no_decay
    assert all(p.dim() == 2 for p in decay["params"])  # weight matrices and embeddings
    assert len(decay["params"]) + len(no_decay["params"]) == sum(p.requires_grad for p in module.parameters())
    lrs = []
    for _ in range(100):
        lrs.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    assert lrs[0] == 0 and lrs[5] == pytest.approx(5e-4) and lrs[10] == pytest.approx(1e-3)
    assert lrs[55] == pytest.approx(5e-4) and optimizer.param_groups[0]["lr"] == 0
