"""ChainContrastiveLoss: hand-computed values, masking, and a 2-process gloo run against one process."""

from __future__ import annotations

import math

import pytest
import torch
import torch.distributed as dist
from torch import nn

from losses import ChainContrastiveLoss, contrastive_logits


def test_matches_hand_computed_value():
    # Unnormalised on purpose: the loss must use cosines.
    query = torch.tensor([[2.0, 0.0], [0.0, 3.0]])
    positive = torch.tensor([[1.0, 1.0], [0.0, 1.0]])
    negatives = torch.tensor([[[1.0, 0.0]], [[-1.0, 0.0]]])
    # Candidates: p0, p1, n0, n1. Cosines for q0: 1/sqrt2, 0, 1, -1; for q1: 1/sqrt2, 1, 0, 0. tau = 0.5.
    s = 2 / math.sqrt(2)
    loss0 = -s + math.log(math.exp(s) + math.exp(0) + math.exp(2) + math.exp(-2))
    loss1 = -2 + math.log(math.exp(s) + math.exp(2) + math.exp(0) + math.exp(0))
    loss = ChainContrastiveLoss(temperature=0.5)(query, positive, negatives)
    assert loss.item() == pytest.approx((loss0 + loss1) / 2, rel=1e-6)

    # Masking n1 removes exp(-2) from q0's sum and one exp(0) from q1's.
    mask = torch.tensor([[True], [False]])
    loss0 = -s + math.log(math.exp(s) + math.exp(0) + math.exp(2))
    loss1 = -2 + math.log(math.exp(s) + math.exp(2) + math.exp(0))
    loss = ChainContrastiveLoss(temperature=0.5)(query, positive, negatives, mask)
    assert loss.item() == pytest.approx((loss0 + loss1) / 2, rel=1e-6)

    # In-batch negatives only.
    loss0 = -s + math.log(math.exp(s) + math.exp(0))
    loss1 = -2 + math.log(math.exp(s) + math.exp(2))
    loss = ChainContrastiveLoss(temperature=0.5)(query, positive)
    assert loss.item() == pytest.approx((loss0 + loss1) / 2, rel=1e-6)


def _loop_reference(query, positive, negatives, mask, temperature):
    """One query at a time: its candidates are all positives plus the valid negatives of every query."""
    pool = torch.cat([positive, negatives[mask]])
    losses = []
    for i in range(query.shape[0]):
        scores = torch.cosine_similarity(query[i : i + 1], pool, dim=-1) / temperature
        losses.append(torch.logsumexp(scores, 0) - scores[i])
    return torch.stack(losses).mean()


def test_masked_negatives_are_the_same_as_dropped():
    torch.manual_seed(0)
    query, positive = torch.randn(4, 8, dtype=torch.float64), torch.randn(4, 8, dtype=torch.float64)
    negatives = torch.randn(4, 3, 8, dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[True, True, False], [True, False, False], [True, True, False], [False, False, False]])
    loss_fn = ChainContrastiveLoss(temperature=0.05)

    loss = loss_fn(query, positive, negatives, mask)
    torch.testing.assert_close(loss, _loop_reference(query, positive, negatives, mask, 0.05), rtol=1e-12, atol=1e-12)
    # The last column is masked everywhere: same as not passing it.
    torch.testing.assert_close(loss, loss_fn(query, positive, negatives[:, :2], mask[:, :2]), rtol=1e-12, atol=1e-12)

    # Whatever sits in the padding, even NaN, changes nothing and receives no gradient.
    loss.backward()
    garbage = negatives.detach().masked_fill(~mask.unsqueeze(-1), float("nan"))
    query = query.clone().requires_grad_(True)
    loss_garbage = loss_fn(query, positive, garbage, mask)
    torch.testing.assert_close(loss_garbage, loss.detach(), rtol=1e-12, atol=1e-12)
    loss_garbage.backward()
    assert torch.isfinite(query.grad).all()
    assert (negatives.grad[~mask] == 0).all() and (negatives.grad[mask] != 0).any()


def test_logits_layout_and_errors():
    query, positive = torch.randn(2, 4), torch.randn(2, 4)
    negatives, mask = torch.randn(2, 3, 4), torch.tensor([[True, False, True], [True, True, True]])
    logits = contrastive_logits(query, positive, negatives, mask, temperature=0.1)
    assert logits.shape == (2, 2 + 6)
    assert torch.isneginf(logits[:, 3]).all() and torch.isfinite(logits[:, [0, 1, 2, 4, 5, 6, 7]]).all()
    torch.testing.assert_close(logits[1, 2 + 3 + 1], torch.cosine_similarity(query[1], negatives[1, 1], dim=0) / 0.1)

    loss_fn = ChainContrastiveLoss()
    with pytest.raises(ValueError, match="same B"):
        loss_fn(query, positive[:1])
    with pytest.raises(ValueError, match="negative_mask"):
        loss_fn(query, positive, negatives, mask.long())
    with pytest.raises(ValueError, match="without negatives"):
        loss_fn(query, positive, None, mask)
    with pytest.raises(ValueError, match="temperature"):
        ChainContrastiveLoss(temperature=0.0)
    # Without a process group the gather flag changes nothing.
    torch.testing.assert_close(
        ChainContrastiveLoss(gather_across_devices=True)(query, positive, negatives, mask),
        loss_fn(query, positive, negatives, mask),
    )


# ---- Two processes ----------------------------------------------------------------------------
# Each case is a combined batch split over 2 ranks. Rank r holds queries r, r + 2, r + 4, ...
# (interleaved), so the gathered candidate order differs from the combined one and a wrong label
# offset, or a wrong positive/negative layout, changes the loss.

D_IN, D_OUT, N_NEG, TAU = 6, 4, 3, 0.1


def _cases() -> dict[str, tuple[torch.Tensor, ...]]:
    g = torch.Generator().manual_seed(1)
    cases = {}
    for name, batch in [("full", 4), ("masked", 4), ("unequal_batch", 5)]:
        query = torch.randn(batch, D_IN, generator=g, dtype=torch.float64)
        positive = torch.randn(batch, D_IN, generator=g, dtype=torch.float64)
        negatives = torch.randn(batch, N_NEG, D_IN, generator=g, dtype=torch.float64)
        mask = torch.ones(batch, N_NEG, dtype=torch.bool)
        if name != "full":
            # Rank 0 (even rows) keeps all its negatives, rank 1 (odd rows) only a few.
            mask[1::2, 1:] = False
            mask[3, 0] = False
        cases[name] = (query, positive, negatives, mask)
    return cases


def _encoder() -> nn.Linear:
    torch.manual_seed(2)
    return nn.Linear(D_IN, D_OUT).double()


def _loss_and_grads(loss_fn, query, positive, negatives, mask, drop_padding=False, scale=1.0):
    """Embed with a fresh copy of the shared encoder; return the loss and the gradients of scale * loss."""
    encoder = _encoder()
    if drop_padding:  # a rank whose collate pads only to its own longest negative list
        keep = int(mask.sum(1).max())
        negatives, mask = negatives[:, :keep], mask[:, :keep]
    loss = loss_fn(encoder(query), encoder(positive), encoder(negatives), mask)
    (scale * loss).backward()
    return loss.detach(), torch.cat([p.grad.reshape(-1) for p in encoder.parameters()])


def _worker(rank: int) -> dict:
    gathered, local = ChainContrastiveLoss(TAU, gather_across_devices=True), ChainContrastiveLoss(TAU)
    results = {}
    for name, tensors in _cases().items():
        shard = [t[rank::2] for t in tensors]
        # With unequal B, scale each rank's loss by B_r * W / sum(B) to weigh every query equally.
        scale = shard[0].shape[0] * 2 / tensors[0].shape[0]
        loss, grads = _loss_and_grads(gathered, *shard, drop_padding=name == "unequal_batch", scale=scale)
        dist.all_reduce(grads)  # DDP: sum then divide by the world size
        weight = torch.tensor([shard[0].shape[0] * loss.item(), shard[0].shape[0]], dtype=torch.float64)
        dist.all_reduce(weight)
        results[name] = {
            "loss": loss,
            "mean_grads": grads / 2,
            "query_weighted_loss": weight[0] / weight[1],
            "local_loss": _loss_and_grads(local, *shard)[0],
        }
    return results


@pytest.fixture(scope="module")
def two_rank_results(spawn_two_ranks):
    return spawn_two_ranks(_worker)


@pytest.mark.parametrize("case", ["full", "masked"])
def test_two_ranks_equal_one_combined_batch(two_rank_results, case):
    loss, grads = _loss_and_grads(ChainContrastiveLoss(TAU), *_cases()[case])
    rank_losses = torch.stack([r[case]["loss"] for r in two_rank_results])
    torch.testing.assert_close(rank_losses.mean(), loss, rtol=1e-10, atol=1e-10)
    for result in two_rank_results:
        torch.testing.assert_close(result[case]["mean_grads"], grads, rtol=0, atol=1e-10)
    # Both ranks hold the whole global pool, so the gathered loss is not the per-rank local loss.
    for result in two_rank_results:
        assert not torch.isclose(result[case]["loss"], result[case]["local_loss"])


def test_two_ranks_with_unequal_batch_and_negative_counts(two_rank_results):
    # Rank 0 holds 3 queries with 3 negatives each, rank 1 holds 2 queries padded to 2 negatives:
    # both are padded before the gather. DDP's plain average weighs each rank equally, so the
    # query-weighted mean of the rank losses is the combined loss, and scaling each rank's loss by
    # B_r * W / sum(B) before DDP's average gives the combined gradients.
    loss, grads = _loss_and_grads(ChainContrastiveLoss(TAU), *_cases()["unequal_batch"])
    for result in two_rank_results:
        torch.testing.assert_close(result["unequal_batch"]["query_weighted_loss"], loss, rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(result["unequal_batch"]["mean_grads"], grads, rtol=0, atol=1e-10)
