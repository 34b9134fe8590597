"""cached_loss (GradCache): the plain loss's value and gradients, dropout replayed, one process and two (gloo, DDP)."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import losses.cached
from losses import ChainContrastiveLoss, cached_loss

D_IN, D_HIDDEN, D_OUT, TAU = 6, 16, 5, 0.1
# Negatives per query (of at most 4): ragged, one query with none; the odd queries have at most 2.
NEGATIVE_COUNTS = [4, 1, 3, 0, 2, 2, 4, 1]


def encoder(seed: int = 2, dropout: float = 0.3) -> nn.Module:
    """A float64 encoder with dropout, so that a wrong random-state replay changes the gradients."""
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(D_IN, D_HIDDEN), nn.Tanh(), nn.Dropout(dropout), nn.Linear(D_HIDDEN, D_OUT)).double()


def global_batch(queries: int = 8, pool: int = 24) -> dict[str, torch.Tensor]:
    """Queries, a pool of distinct candidate inputs (as deduplicated triple texts), and per query the pool
    index of its positive and of its padded negatives; some negatives are other queries' positives."""
    g = torch.Generator().manual_seed(1)
    width = max(NEGATIVE_COUNTS)
    mask = torch.arange(width) < torch.tensor(NEGATIVE_COUNTS[:queries]).unsqueeze(1)
    return {
        "queries": torch.randn(queries, D_IN, generator=g, dtype=torch.float64),
        "pool": torch.randn(pool, D_IN, generator=g, dtype=torch.float64),
        "positive": torch.randperm(pool, generator=g)[:queries],
        "negatives": torch.randint(pool, (queries, width), generator=g),
        "mask": mask,
    }


def shard(batch: dict[str, torch.Tensor], rank: int, world: int) -> dict[str, torch.Tensor]:
    """Rank `rank`'s queries (interleaved), with only the pool entries they use, padded to their own widest."""
    rows = slice(rank, None, world)
    mask = batch["mask"][rows]
    width = int(mask.sum(1).max())
    positive, negatives, mask = batch["positive"][rows], batch["negatives"][rows][:, :width], mask[:, :width]
    used = torch.unique(torch.cat([positive, negatives[mask]]))
    local = torch.full((batch["pool"].shape[0],), -1, dtype=torch.long)
    local[used] = torch.arange(len(used))
    return {"queries": batch["queries"][rows], "pool": batch["pool"][used], "positive": local[positive],
            "negatives": local[negatives].clamp(min=0), "mask": mask}


def mini_batches(batch: dict[str, torch.Tensor], size: int) -> list[tuple[str, torch.Tensor]]:
    """The queries, then the pool, `size` inputs at a time."""
    out = [("query", q) for q in batch["queries"].split(size)]
    return out + [("pool", c) for c in batch["pool"].split(size)]


def loss_of(loss_fn: nn.Module, batch: dict[str, torch.Tensor], parts: list[tuple[str, torch.Tensor]],
            embedded: list[torch.Tensor]) -> torch.Tensor:
    """Join the mini-batch embeddings and lay them out as `ChainContrastiveLoss` takes them."""
    queries = torch.cat([e for (kind, _), e in zip(parts, embedded) if kind == "query"])
    pool = torch.cat([e for (kind, _), e in zip(parts, embedded) if kind == "pool"])
    negatives = pool[batch["negatives"]] if batch["mask"].shape[1] else None
    return loss_fn(queries, pool[batch["positive"]], negatives, batch["mask"] if negatives is not None else None)


def plain(model: nn.Module, loss_fn: nn.Module, batch: dict, size: int, seed: int | None = None) -> torch.Tensor:
    """The plain loss: every mini-batch embedded with gradients, in order; backpropagated."""
    if seed is not None:
        torch.manual_seed(seed)
    parts = mini_batches(batch, size)
    loss = loss_of(loss_fn, batch, parts, [model(x) for _, x in parts])
    loss.backward()
    return loss.detach()


def cached(model: nn.Module, loss_fn: nn.Module, batch: dict, size: int, seed: int | None = None,
           **kwargs) -> torch.Tensor:
    if seed is not None:
        torch.manual_seed(seed)
    parts = mini_batches(batch, size)
    loss = cached_loss(lambda part: model(part[1]), parts, lambda e: loss_of(loss_fn, batch, parts, e),
                       model.parameters(), **kwargs)
    loss.backward()
    return loss.detach()


def grads(model: nn.Module) -> list[torch.Tensor | None]:
    out = [None if p.grad is None else p.grad.clone() for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    return out


def assert_same_grads(actual: list, expected: list, atol: float = 1e-12) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert (a is None) == (e is None)
        if a is not None:
            torch.testing.assert_close(a, e, rtol=1e-10, atol=atol)


# ---- One process ------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 3, 5, 100])  # none divides 8 queries and 24 pool inputs but 1; 100: one pass each
def test_equals_the_plain_loss_with_dropout_and_masked_negatives(size):
    model, loss_fn, batch = encoder(), ChainContrastiveLoss(TAU), global_batch(queries=7)  # 7: a ragged last chunk
    expected_loss = plain(model, loss_fn, batch, size, seed=5)
    expected_rng = torch.get_rng_state()
    expected = grads(model)
    assert all(g is not None and g.abs().sum() > 0 for g in expected)

    loss = cached(model, loss_fn, batch, size, seed=5)
    torch.testing.assert_close(loss, expected_loss, rtol=1e-12, atol=1e-12)
    assert_same_grads(grads(model), expected)
    # The random state is left where the plain pass leaves it.
    assert torch.equal(torch.get_rng_state(), expected_rng)

    # Dropout is on and matters: another seed gives another loss.
    assert not torch.isclose(cached(model, loss_fn, batch, size, seed=6), expected_loss)


def test_the_dropout_replay_is_what_makes_it_exact(monkeypatch):
    model, loss_fn, batch = encoder(), ChainContrastiveLoss(TAU), global_batch()
    expected_loss = plain(model, loss_fn, batch, 3, seed=5)
    expected = grads(model)
    monkeypatch.setattr(losses.cached._RngState, "restore", lambda self: None)
    loss = cached(model, loss_fn, batch, 3, seed=5)
    torch.testing.assert_close(loss, expected_loss, rtol=1e-12, atol=1e-12)  # the first pass is the plain one
    actual = grads(model)
    assert not all(torch.allclose(a, e) for a, e in zip(actual, expected))  # but without replay, other masks


def test_backward_accumulates_takes_the_incoming_gradient_and_runs_once():
    model, loss_fn, batch = encoder(), ChainContrastiveLoss(TAU), global_batch()
    plain(model, loss_fn, batch, 3, seed=5)
    expected = grads(model)

    for p in model.parameters():
        p.grad = torch.ones_like(p)
    torch.manual_seed(5)
    parts = mini_batches(batch, 3)
    loss = cached_loss(lambda part: model(part[1]), parts, lambda e: loss_of(loss_fn, batch, parts, e),
                       model.parameters())
    (3 * loss).backward(retain_graph=True)
    assert_same_grads(grads(model), [1 + 3 * e for e in expected])
    with pytest.raises(RuntimeError, match="only once"):
        loss.backward()

    # A float16 GradScaler's scale, applied to the encoder's backward and taken off again, changes nothing.
    cached(model, loss_fn, batch, 3, seed=5, grad_scale=2.0**16)
    assert_same_grads(grads(model), expected)

    # Without gradients, just the loss.
    with torch.no_grad():
        value = cached_loss(lambda part: model(part[1]), parts, lambda e: loss_of(loss_fn, batch, parts, e),
                            model.parameters())
    assert not value.requires_grad and all(p.grad is None for p in model.parameters())


def test_frozen_and_unused_parameters_get_no_gradient_as_in_the_plain_loss():
    class WithUnused(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net, self.unused = encoder(), nn.Linear(2, 2).double()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.net(x)

    model, loss_fn, batch = WithUnused(), ChainContrastiveLoss(TAU), global_batch()
    model.net[0].requires_grad_(False)
    plain(model, loss_fn, batch, 3, seed=5)
    expected = grads(model)
    assert expected[0] is None and expected[-1] is None and expected[2] is not None
    cached(model, loss_fn, batch, 3, seed=5)
    assert_same_grads(grads(model), expected)


# ---- Two processes ----------------------------------------------------------------------------
# The global batch of 8 queries is split over 2 ranks (interleaved), each embedding only its own
# inputs; the gathered loss scores each query against the candidates of both.

SIZE = 3  # 4 queries and 10-12 pool inputs per rank: ragged chunks


class CachedStep(nn.Module):
    """What a LightningModule's training step does under DDP: the cached loss inside the wrapped forward."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model
        self.loss = ChainContrastiveLoss(TAU, gather_across_devices=True)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        parts = mini_batches(batch, SIZE)
        return cached_loss(lambda part: self.model(part[1]), parts, lambda e: loss_of(self.loss, batch, parts, e),
                           self.model.parameters())


def averaged(model: nn.Module) -> list[torch.Tensor]:
    """The gradients as DDP leaves them: summed over the ranks, divided by the world size."""
    out = grads(model)
    for g in out:
        dist.all_reduce(g)
        g /= 2
    return out


def _worker(rank: int) -> dict:
    batch, gathered = shard(global_batch(), rank, 2), ChainContrastiveLoss(TAU, gather_across_devices=True)
    results = {}
    # Dropout on, its masks drawn per rank: the cached loss against the plain gathered loss.
    model = encoder()
    results["plain_dropout"] = (plain(model, gathered, batch, SIZE, seed=10 + rank), averaged(model))
    results["cached_dropout"] = (cached(model, gathered, batch, SIZE, seed=10 + rank), averaged(model))
    # Dropout off: against one process on the union batch (checked by the test).
    model.eval()
    results["cached"] = (cached(model, gathered, batch, SIZE), averaged(model))

    # Under DistributedDataParallel, two steps each (a reducer left waiting would fail the second),
    # then gradient accumulation over two micro-batches with no_sync on the first.
    for find_unused in (False, True):
        model = encoder().eval()
        ddp = DistributedDataParallel(CachedStep(model), find_unused_parameters=find_unused)
        for step in range(2):
            loss = ddp(batch)
            loss.backward()
            results[f"ddp_{find_unused}_{step}"] = (loss.detach(), grads(model))
        with ddp.no_sync():
            ddp(batch).backward()
        ddp(batch).backward()
        results[f"ddp_{find_unused}_accumulated"] = (None, grads(model))
    return results


@pytest.fixture(scope="module")
def two_rank_results(spawn_two_ranks):
    return spawn_two_ranks(_worker)


@pytest.fixture(scope="module")
def union():
    """One process, plain loss, dropout off, the whole global batch in one pass each."""
    model = encoder().eval()
    loss = plain(model, ChainContrastiveLoss(TAU), global_batch(), 100)
    return loss, grads(model)


def test_two_ranks_cached_equals_plain_gathered_loss_with_dropout(two_rank_results):
    for result in two_rank_results:
        expected_loss, expected = result["plain_dropout"]
        loss, actual = result["cached_dropout"]
        torch.testing.assert_close(loss, expected_loss, rtol=1e-12, atol=1e-12)
        assert_same_grads(actual, expected)
    # The ranks' averaged gradients agree, and their losses differ (each scores its own queries).
    assert_same_grads(two_rank_results[0]["cached_dropout"][1], two_rank_results[1]["cached_dropout"][1])
    assert not torch.isclose(two_rank_results[0]["cached_dropout"][0], two_rank_results[1]["cached_dropout"][0])


def test_two_ranks_cached_equals_one_process_on_the_union_batch(two_rank_results, union):
    expected_loss, expected = union
    losses = torch.stack([r["cached"][0] for r in two_rank_results])
    torch.testing.assert_close(losses.mean(), expected_loss, rtol=1e-12, atol=1e-12)
    for result in two_rank_results:
        assert_same_grads(result["cached"][1], expected)


@pytest.mark.parametrize("find_unused", [False, True])
def test_under_ddp_each_gradient_is_all_reduced_once(two_rank_results, union, find_unused):
    expected_loss, expected = union
    for step in range(2):
        losses = torch.stack([r[f"ddp_{find_unused}_{step}"][0] for r in two_rank_results])
        torch.testing.assert_close(losses.mean(), expected_loss, rtol=1e-12, atol=1e-12)
        for result in two_rank_results:
            assert_same_grads(result[f"ddp_{find_unused}_{step}"][1], expected)  # DDP's average: once, not twice
    for result in two_rank_results:  # no_sync, then a synced micro-batch: the sum of both, averaged once
        assert_same_grads(result[f"ddp_{find_unused}_accumulated"][1], [2 * e for e in expected])
