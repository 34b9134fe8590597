"""Contrastive loss for the KiRAG Aligner: in-batch and candidate negatives, optionally across devices."""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_nn
import torch.nn.functional as F
from torch import Tensor, nn


def _check_inputs(query: Tensor, positive: Tensor, negatives: Tensor | None, negative_mask: Tensor | None) -> None:
    if query.dim() != 2 or positive.dim() != 2 or positive.shape[1] != query.shape[1]:
        raise ValueError(
            f"query and positive must be (B, d) with the same d, got {tuple(query.shape)} and {tuple(positive.shape)}"
        )
    if negatives is None:
        if negative_mask is not None:
            raise ValueError("negative_mask was given without negatives")
        return
    if negatives.dim() != 3 or negatives.shape[2] != query.shape[1]:
        raise ValueError(f"negatives must be (B, n, {query.shape[1]}), got {tuple(negatives.shape)}")
    if negative_mask is not None and (negative_mask.shape != negatives.shape[:2] or negative_mask.dtype != torch.bool):
        raise ValueError(
            f"negative_mask must be a bool tensor of shape {tuple(negatives.shape[:2])}, "
            f"got {negative_mask.dtype} {tuple(negative_mask.shape)}"
        )


def contrastive_logits(
    query: Tensor,
    positive: Tensor,
    negatives: Tensor | None = None,
    negative_mask: Tensor | None = None,
    positive_mask: Tensor | None = None,
    temperature: float = 0.01,
) -> Tensor:
    """Scaled cosine similarities between queries and the candidate pool; invalid candidates get -inf.

    Args:
        query: (Q, d) query embeddings.
        positive: (P, d) positive embeddings. P may exceed Q (positives gathered from other devices).
        negatives: (M, n, d) negative embeddings, or None for in-batch negatives only.
        negative_mask: (M, n) bool, True where a negative is real. None means all are real.
        positive_mask: (P,) bool, True where a positive is real. None means all are real.
        temperature: the scores are cos(q, c) / temperature.

    Returns:
        (Q, P + M * n) logits. Column j < P is positive j; column P + m * n + k is negative k of
        row m. Masked-out candidates are exactly -inf, so they get zero probability and no gradient.

    The similarities are computed in at least float32 with autocast off: at temperature 0.01 a
    bfloat16 rounding error of 0.004 in a cosine would move a logit by 0.4.
    """
    _check_inputs(query, positive, negatives, negative_mask)
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    dim = query.shape[1]
    candidates, valid = [positive], [positive_mask]
    if negatives is not None:
        if negative_mask is not None:
            # Zero the padding first so that even NaN padding cannot reach the gradients.
            negatives = negatives.masked_fill(~negative_mask.unsqueeze(-1), 0.0)
            negative_mask = negative_mask.reshape(-1)
        candidates.append(negatives.reshape(-1, dim))
        valid.append(negative_mask)

    dtype = torch.promote_types(query.dtype, torch.float32)
    with torch.autocast(device_type=query.device.type, enabled=False):
        q = F.normalize(query.to(dtype), dim=-1)
        c = F.normalize(torch.cat(candidates).to(dtype), dim=-1)
        logits = q @ c.T / temperature
    if any(v is not None for v in valid):
        sizes = [x.shape[0] for x in candidates]
        keep = torch.cat(
            [torch.ones(s, dtype=torch.bool, device=query.device) if v is None else v for s, v in zip(sizes, valid)]
        )
        logits = logits.masked_fill(~keep, float("-inf"))
    return logits


def _gather_with_grad(tensor: Tensor) -> Tensor:
    """Concatenate `tensor` from every rank along dim 0; gradients flow back to each rank's shard."""
    return torch.cat(dist_nn.all_gather(tensor), dim=0)


class ChainContrastiveLoss(nn.Module):
    """InfoNCE over cosine similarities, with candidate negatives and in-batch (optionally global) negatives.

    This is the training loss of KiRAG's Aligner. A query is a question followed by an incomplete
    reasoning chain; its positive is the next triple of the chain; its candidate negatives are other
    triples from the documents retrieved for that query. One shared encoder embeds both queries and
    triples, and the loss pushes each query towards its own next triple and away from every other
    candidate.

    Inputs (B local queries, embedding size d, up to n candidate negatives per query):
        query: (B, d) query embeddings.
        positive: (B, d) positive embeddings; row i is the positive of query i.
        negatives: (B, n, d) candidate negatives of each query, or None (in-batch negatives only).
        negative_mask: (B, n) bool, True for a real negative. Queries with fewer than n negatives
            pad the rest and mark them False; None means every negative is real.
        The embeddings need not be normalised: the loss normalises them, so the score is the cosine.

    Candidates: for every query, the candidate pool is every positive and every valid negative of
    the batch, so the positives and negatives of the other queries serve as extra negatives. The
    logits are cos(q, c) / temperature (KiRAG uses 0.01), the target is the query's own positive,
    and the loss is the cross-entropy averaged over the local queries. Masked-out negatives get
    logit -inf: they contribute nothing to the loss or to the gradients, exactly as if dropped.

    Across devices (`gather_across_devices=True`, torch.distributed initialised, world size W > 1):
    positives, negatives and masks are gathered from all ranks and the pool becomes
    [positives of rank 0, ..., positives of rank W-1 ; negatives of rank 0, ..., negatives of rank W-1].
    Queries stay local; the target of local query i on rank r is column r * B + i. The gather keeps
    the autograd graph: the gradient that rank r's loss sends to another rank's candidates is sent
    back to that rank. Ranks may hold different numbers of queries or negatives: sizes are
    exchanged first and every rank pads to the largest B and n, with the padding masked out (B then
    means that largest B in the column formula). Every rank must call the loss the same number of
    times, since each call runs collectives. Without an initialised process group, or with W = 1,
    the flag changes nothing.

    Why this matches one large batch: let L_r be rank r's mean loss over its B queries. Because the
    gather passes gradients back, each rank's backward accumulates, for its own parameters' copy,
    the gradient of L_r plus the gradients that the other ranks' losses sent to its embeddings;
    summed over ranks this is the gradient of sum_r L_r. DDP then averages parameter gradients
    over the W ranks, giving the gradient of (1/W) sum_r L_r, which is the mean loss over all
    W * B queries of the global batch, each scored against the global candidate pool. So training
    on W devices with B queries each gives the same gradients as one device with W * B queries.
    With unequal B per rank, DDP's plain average weights each rank's mean equally rather than each
    query equally; scale the loss by B_r * W / sum(B) if that matters.

    Reference: the InfoNCE contrastive objective of van den Oord et al. (2018), in the form used
    by KiRAG (Fang et al., 2025) to train its Aligner. See `contrastive_logits` for the functional
    scoring, e.g. to rank the positive among the candidates at validation time.
    """

    def __init__(self, temperature: float = 0.01, gather_across_devices: bool = False) -> None:
        super().__init__()
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.temperature = temperature
        self.gather_across_devices = gather_across_devices

    def extra_repr(self) -> str:
        return f"temperature={self.temperature}, gather_across_devices={self.gather_across_devices}"

    def forward(
        self,
        query: Tensor,
        positive: Tensor,
        negatives: Tensor | None = None,
        negative_mask: Tensor | None = None,
    ) -> Tensor:
        _check_inputs(query, positive, negatives, negative_mask)
        if positive.shape[0] != query.shape[0] or (negatives is not None and negatives.shape[0] != query.shape[0]):
            raise ValueError(
                f"query, positive and negatives must have the same B, got {tuple(query.shape)}, "
                f"{tuple(positive.shape)} and {None if negatives is None else tuple(negatives.shape)}"
            )
        labels = torch.arange(query.shape[0], device=query.device)
        positive_mask = None
        if self.gather_across_devices and dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
            positive, negatives, negative_mask, positive_mask, offset = self._gather(positive, negatives, negative_mask)
            labels = labels + offset
        logits = contrastive_logits(query, positive, negatives, negative_mask, positive_mask, self.temperature)
        return F.cross_entropy(logits, labels)

    @staticmethod
    def _gather(
        positive: Tensor, negatives: Tensor | None, negative_mask: Tensor | None
    ) -> tuple[Tensor, Tensor | None, Tensor | None, Tensor, int]:
        """Gather candidates from all ranks, padded to a common B and n; return them with the label offset."""
        device = positive.device
        batch, n = positive.shape[0], 0 if negatives is None else negatives.shape[1]
        sizes = [torch.zeros(2, dtype=torch.long, device=device) for _ in range(dist.get_world_size())]
        dist.all_gather(sizes, torch.tensor([batch, n], dtype=torch.long, device=device))
        sizes = torch.stack(sizes).cpu()
        max_batch, max_n = int(sizes[:, 0].max()), int(sizes[:, 1].max())

        positive_mask = (torch.arange(max_batch) < sizes[:, :1]).reshape(-1).to(device)
        if max_n > 0:
            if negatives is None:
                negatives = positive.new_zeros(batch, 0, positive.shape[1])
            if negative_mask is None:
                negative_mask = torch.ones(negatives.shape[:2], dtype=torch.bool, device=device)
            padding = (0, max_n - n, 0, max_batch - batch)
            negatives = _gather_with_grad(F.pad(negatives, (0, 0, *padding)))
            # Masks need no gradient; they travel as uint8, which every backend can gather.
            masks = [torch.empty(max_batch, max_n, dtype=torch.uint8, device=device) for _ in range(len(sizes))]
            dist.all_gather(masks, F.pad(negative_mask.to(torch.uint8), padding))
            negative_mask = torch.cat(masks).bool()
        else:
            negatives = negative_mask = None
        positive = _gather_with_grad(F.pad(positive, (0, 0, 0, max_batch - batch)))
        return positive, negatives, negative_mask, positive_mask, dist.get_rank() * max_batch
