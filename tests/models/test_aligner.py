"""AlignerModule: its encoder settings, embedding layout, loss, validation metrics, optimizer groups, LoRA, and
the gradient cache (one process and 2-process DDP through the Trainer)."""

import inspect
from dataclasses import asdict
from types import SimpleNamespace

import lightning as L
import pytest
import torch
import torch.distributed as dist
from conftest import tiny_bert
from torch import nn
from torch.utils.data import DataLoader, Sampler

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


# ---- The gradient cache (cache_mini_batch) ------------------------------------------------------


def examples(n: int) -> list[dict]:
    """Examples with 0 to 3 negatives, queries of several lengths, some negatives other examples' positives."""
    out = []
    for i in range(n):
        negatives = [f"<x{i}{j}; in; city>" for j in range(i % 4)]
        if negatives:
            negatives[0] = f"<band {(i + 1) % n}; formed in; city>"
        query = "who is the band " + "in the river " * (i % 3) + str(i)
        out.append({"index": i, "question_id": f"q{i}", "query": query, "positive": f"<band {i}; formed in; city>",
                    "negatives": negatives})
    return out


def named_grads(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    out = {n: p.grad.clone() for n, p in module.named_parameters() if p.grad is not None}
    module.zero_grad(set_to_none=True)
    return out


def assert_close_dicts(actual: dict, expected: dict, rtol: float = 1e-9, atol: float = 1e-12) -> None:
    assert actual.keys() == expected.keys() and expected
    for name in expected:
        torch.testing.assert_close(actual[name], expected[name], rtol=rtol, atol=atol, msg=lambda m: f"{name}: {m}")


def test_cache_mini_batch_must_be_positive(tiny_model_dir):
    with pytest.raises(ValueError, match="cache_mini_batch"):
        aligner(tiny_model_dir, cache_mini_batch=0)


def test_cached_step_equals_the_plain_step_with_dropout(tiny_model_dir):
    batch = collate(examples(7))  # 7 queries and 13 distinct triples
    for size in (2, 5):  # neither divides either count
        module = aligner(tiny_model_dir, temperature=0.05, cache_mini_batch=size).double()
        assert module.training
        mini_batches, _ = module._mini_batches(batch)
        assert len(mini_batches) > 3 and max(len(texts) for _, texts in mini_batches) == size
        # The plain loss on the same forward passes, with gradients: `embed` with the same mini-batches.
        torch.manual_seed(0)
        expected_loss = module.loss(*module.embed(batch))
        expected_loss.backward()
        expected = named_grads(module)
        torch.manual_seed(0)
        loss = module.training_step(batch, 0)
        loss.backward()
        torch.testing.assert_close(loss.detach(), expected_loss.detach(), rtol=1e-12, atol=1e-12)
        assert_close_dicts(named_grads(module), expected)
        torch.manual_seed(1)  # dropout is on: other masks, another loss
        assert not torch.isclose(module.training_step(batch, 0), expected_loss)

    # One mini-batch for all queries and one for all distinct triples: the plain step's own passes and masks.
    plain, cached = aligner(tiny_model_dir).double(), aligner(tiny_model_dir, cache_mini_batch=64).double()
    results = []
    for module in (plain, cached):
        torch.manual_seed(0)
        loss = module.training_step(batch, 0)
        loss.backward()
        results.append((loss.detach(), named_grads(module)))
    torch.testing.assert_close(results[1][0], results[0][0], rtol=1e-12, atol=1e-12)
    assert_close_dicts(results[1][1], results[0][1])
    assert all(p.grad is None for p in cached.encoder.model.pooler.parameters())  # frozen, unused


class RecordSteps(L.Callback):
    """Saves each rank's gradients before every optimizer step (all-reduced, not yet clipped) and its final weights."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def on_before_optimizer_step(self, trainer, pl_module, optimizer) -> None:
        grads = {n: p.grad.clone() for n, p in pl_module.named_parameters() if p.grad is not None}
        torch.save(grads, f"{self.folder}/rank{trainer.global_rank}_step{trainer.global_step}.pt")

    def on_train_end(self, trainer, pl_module) -> None:
        loss = trainer.callback_metrics["train/loss"]
        torch.save((pl_module.state_dict(), loss), f"{self.folder}/rank{trainer.global_rank}_end.pt")


class Interleaved(Sampler):
    """Rank r of W takes examples r, r + W, r + 2W, ... in order: its batch k and the other ranks' batch k
    make up batch k of one process with W times the batch size. (Lightning's own sampler would shuffle.)"""

    def __init__(self, size: int) -> None:
        self.size = size

    def _shard(self) -> range:
        rank, world = (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)
        return range(rank, self.size, world)

    def __iter__(self):
        return iter(self._shard())

    def __len__(self) -> int:
        return len(self._shard())


def fit(model_dir: str, folder, batch_size: int, devices: int = 1, accumulate: int = 1, **kwargs) -> None:
    """Two optimizer steps in float64 with gradient clipping, on batches of `batch_size` examples per device."""
    folder.mkdir()
    L.seed_everything(0)
    module = aligner(model_dir, temperature=0.05, lr=1e-3, warmup_ratio=0.0, **kwargs)
    n = 2 * accumulate * batch_size * devices
    loader = DataLoader(examples(n), batch_size=batch_size, sampler=Interleaved(n), collate_fn=collate)
    trainer = L.Trainer(
        accelerator="cpu", devices=devices, strategy="ddp_spawn" if devices > 1 else "auto", precision="64-true",
        max_steps=2, accumulate_grad_batches=accumulate, gradient_clip_val=0.01, limit_val_batches=0,
        num_sanity_val_steps=0, logger=False,
        use_distributed_sampler=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
        callbacks=[RecordSteps(str(folder))],
    )
    trainer.fit(module, train_dataloaders=loader)


def recorded(folder, rank: int = 0) -> tuple[list[dict], dict, torch.Tensor]:
    grads = [torch.load(folder / f"rank{rank}_step{step}.pt") for step in range(2)]
    weights, loss = torch.load(folder / f"rank{rank}_end.pt")
    return grads, weights, loss


@pytest.fixture(scope="module")
def no_dropout_model_dir(tmp_path_factory, tiny_tokenizer) -> str:
    """The tiny random BERT with dropout off, so that mini-batch sizes do not change the masks."""
    folder = tmp_path_factory.mktemp("no_dropout")
    model = tiny_bert(len(tiny_tokenizer))
    model.config.hidden_dropout_prob = model.config.attention_probs_dropout_prob = 0.0
    model.save_pretrained(folder)
    tiny_tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.mark.parametrize("case", ["dropout", "no_dropout", "accumulate"])
def test_trainer_steps_with_the_cache_equal_plain_steps(tiny_model_dir, no_dropout_model_dir, tmp_path, case):
    # With dropout, one mini-batch holds every query and distinct triple (the same masks as the plain step);
    # without, 3 texts per pass: 8 (or 4) queries and 12-14 distinct triples per batch in ragged chunks.
    model_dir, size = (tiny_model_dir, 64) if case == "dropout" else (no_dropout_model_dir, 3)
    batch_size, accumulate = (4, 2) if case == "accumulate" else (8, 1)
    fit(model_dir, tmp_path / "plain", batch_size, accumulate=accumulate)
    fit(model_dir, tmp_path / "cached", batch_size, accumulate=accumulate, cache_mini_batch=size)
    plain_grads, plain_weights, plain_loss = recorded(tmp_path / "plain")
    grads, weights, loss = recorded(tmp_path / "cached")
    for actual, expected in zip(grads, plain_grads):
        assert_close_dicts(actual, expected)
    assert_close_dicts(weights, plain_weights)
    torch.testing.assert_close(loss, plain_loss, rtol=1e-12, atol=1e-12)  # train/loss of the last step
    assert not all(torch.equal(weights[k], w) for k, w in aligner(model_dir).double().state_dict().items()
                   if k in weights)  # it trained


def test_two_process_ddp_with_the_cache_equals_one_process_on_the_global_batch(no_dropout_model_dir, tmp_path):
    """ddp_spawn, gloo on CPU: 3 examples per rank, 2 texts a pass, candidates gathered across the ranks, and
    2 batches accumulated per optimizer step (the first under DDP's no_sync)."""
    fit(no_dropout_model_dir, tmp_path / "one", batch_size=6, accumulate=2)
    fit(no_dropout_model_dir, tmp_path / "ddp", batch_size=3, devices=2, accumulate=2, cache_mini_batch=2)
    expected_grads, expected_weights, _ = recorded(tmp_path / "one")
    for rank in (0, 1):
        grads, weights, _ = recorded(tmp_path / "ddp", rank)
        for actual, expected in zip(grads, expected_grads):
            assert_close_dicts(actual, expected)
        assert_close_dicts(weights, expected_weights)
