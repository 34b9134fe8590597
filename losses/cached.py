"""GradCache: a loss over embeddings computed for a batch larger than memory, one mini-batch at a time."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import torch
from torch import Tensor

T = TypeVar("T")


class _RngState:
    """The CPU random state and, once CUDA is in use, every CUDA device's: to replay a mini-batch's dropout."""

    def __init__(self) -> None:
        self.cpu = torch.get_rng_state()
        self.cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None

    def restore(self) -> None:
        torch.set_rng_state(self.cpu)
        if self.cuda is not None:
            torch.cuda.set_rng_state_all(self.cuda)


class _WithGradients(torch.autograd.Function):
    """Returns `value`; its backward gives each parameter its precomputed gradient times the incoming one."""

    @staticmethod
    def forward(ctx: Any, value: Tensor, grads: list[Tensor], *params: Tensor) -> Tensor:
        ctx.grads = grads
        return value.clone()

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> tuple[Tensor | None, ...]:
        grads, ctx.grads = ctx.grads, None  # dropped here, so that AccumulateGrad can keep them without a copy
        if grads is None:
            raise RuntimeError("a cached loss can be backpropagated only once")
        return (None, None, *(g.mul_(grad_output) for g in grads))


def cached_loss(
    embed: Callable[[T], Tensor],
    mini_batches: Sequence[T],
    loss_fn: Callable[[list[Tensor]], Tensor],
    params: Iterable[Tensor],
    grad_scale: float = 1.0,
) -> Tensor:
    """A loss over the embeddings of many mini-batches, with the activation memory of one (GradCache).

    This trains a contrastive encoder on a batch whose forward activations do not fit in memory at
    once, such as KiRAG's Aligner on 512+ queries with their candidate triples on one GPU: the
    loss needs every embedding of the batch together (each query is scored against every
    candidate), but the encoder's activations are only needed one mini-batch at a time.

    Inputs:
        embed: the encoder, called as `embed(mini_batch)` -> (m, d) embeddings (any leading shape).
            It is called twice per mini-batch, without then with gradients, and must compute the
            same thing both times given the same random state (dropout is replayed; a module that
            updates its state in the forward pass, such as BatchNorm, would see each input twice).
        mini_batches: the inputs, split as the caller likes (e.g. queries, then distinct candidate
            texts, each in chunks of m).
        loss_fn: maps the list of embeddings, one tensor per mini-batch in order, to the scalar
            loss; e.g. it concatenates them, lays them out as queries, positives and padded
            negatives, and calls `ChainContrastiveLoss` (with `gather_across_devices` if wanted).
        params: the encoder's parameters; those that do not require grad are skipped.
        grad_scale: the embedding gradients are multiplied by this before they are backpropagated
            through the encoder and the parameter gradients divided by it afterwards: pass a float16
            GradScaler's scale so that the encoder's backward does not underflow. 1 otherwise.

    Returns:
        A scalar with the loss's value. Its backward gives each parameter in `params` the gradient
        of the loss (times the incoming gradient, e.g. a GradScaler's scale), accumulated into
        `.grad` like any backward, and touches each parameter exactly once. Backpropagate it once.
        Under `torch.no_grad()` it is just `loss_fn` of the embeddings, computed in one pass.

    How: (1) embed every mini-batch without gradients, saving the random state before each one;
    (2) compute the loss on these cached embeddings and its gradient with respect to each of them
    (`torch.autograd.grad`; the loss's own collectives, such as `ChainContrastiveLoss`'s gather
    across devices and its backward, run here on every rank alike); (3) for each mini-batch,
    restore its random state, embed it again with gradients, and backpropagate its cached
    embedding gradient into the parameters (`torch.autograd.grad` again, so that nothing is
    accumulated into `.grad` yet), summing the parameter gradients; (4) return the loss through an
    autograd function whose backward hands each parameter its summed gradient. The random state
    is left as steps 1-2 left it, as a plain pass would.

    Why it equals the plain loss: with e_i = f(x_i; theta) the embeddings of mini-batch i and
    L = loss_fn(e_1, ..., e_k), the chain rule gives dL/dtheta = sum_i (de_i/dtheta)^T dL/de_i.
    Step 2 computes every dL/de_i exactly, at the same e_i as a pass with gradients would (the
    values do not depend on whether gradients are recorded, and the dropout masks are the same
    because each mini-batch's random state is replayed); step 3 computes each vector-Jacobian
    product from a fresh pass over mini-batch i alone. So the value and the parameter gradients
    are those of the plain loss that embeds the same mini-batches in the same order with
    gradients, up to floating-point summation order; with dropout off, those of one pass over the
    whole batch. Only one mini-batch's activations are alive at a time, plus every embedding
    and one gradient-sized buffer for the summed parameter gradients.

    Under DistributedDataParallel: call it inside the wrapped module's forward (e.g. a Lightning
    `training_step`), then backpropagate the result as usual. Steps 1-3 accumulate nothing into
    `.grad` and so fire none of DDP's gradient hooks; the single backward of step 4 runs each
    parameter's gradient accumulation once, so DDP's reducer marks each parameter ready once and
    all-reduces (averages) the gradients once per step, overlapping as usual, and `no_sync` for
    gradient accumulation works unchanged. With `ChainContrastiveLoss(gather_across_devices=True)`
    the per-rank gradients are then those of the plain gathered loss, which its docstring shows
    equal one large batch. Strategies that shard the parameters (FSDP, DeepSpeed ZeRO) are not
    covered: the parameters must be whole inside the forward.

    Reference: Gao, Zhang, Han and Callan (2021), "Scaling Deep Contrastive Learning Batch Size
    under Memory Limited Setup" (GradCache), whose gradient cache and random-state replay this is;
    sentence-transformers' CachedMultipleNegativesRankingLoss applies the same idea.
    """
    params = [p for p in params if p.requires_grad]
    if not torch.is_grad_enabled() or not params:
        return loss_fn([embed(batch) for batch in mini_batches])

    states, cached = [], []
    with torch.no_grad():
        for batch in mini_batches:
            states.append(_RngState())
            cached.append(embed(batch))

    leaves = [e.detach().requires_grad_() for e in cached]
    del cached
    loss = loss_fn(leaves)
    embedding_grads = torch.autograd.grad(loss, leaves, allow_unused=True)
    del leaves
    after = _RngState()  # where a plain pass would have left it

    grads: list[Tensor | None] = [None] * len(params)
    for batch, state, grad in zip(mini_batches, states, embedding_grads):
        if grad is None:  # this mini-batch does not reach the loss
            continue
        state.restore()
        embedded = embed(batch)
        if grad_scale != 1.0:
            grad = grad * grad_scale
        batch_grads = torch.autograd.grad(embedded, params, grad, allow_unused=True)
        for j, g in enumerate(batch_grads):
            if g is not None:
                grads[j] = g if grads[j] is None else grads[j].add_(g)
        del embedded, batch_grads
    after.restore()

    kept = [(p, g if grad_scale == 1.0 else g.div_(grad_scale)) for p, g in zip(params, grads) if g is not None]
    if not kept:
        return loss.detach()
    return _WithGradients.apply(loss.detach(), [g for _, g in kept], *(p for p, _ in kept))
