"""Learns MIND's α, β (retrieval trigger) and γ, δ with a threshold (entity filter) from labelled traces.

Neither paper's code sets these from data. Both decisions are hard comparisons; training uses
their sigmoid relaxations at a fixed temperature T (which also fixes the scale of the parameters):

    P(retrieve | sentence) = σ((max_w S(w) − θ) / T),    θ = α·mean(H) + β·mean(maxAttn),  S = H·maxAttn·s
    P(keep | entity)       = σ((conf(e) − τ) / T),      conf(e) = max_t γ/(1+H_t) + δ·maxAttn_t

The loss is BCE on both, plus `cost` × the mean retrieval probability: a price per retrieval that
trades accuracy for fewer calls. Validation logs the hard trigger rate, the share of positive
labels and, when both labels occur, AUROC (torchmetrics).
`save_params` writes the small JSON checkpoint that the MIND loop loads (`MindParams.load`).
"""

from __future__ import annotations

import json
from pathlib import Path

import lightning as L
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torchmetrics import MeanMetric
from torchmetrics.classification import BinaryAUROC

PARAMS = ("alpha", "beta", "gamma", "delta", "threshold")


def trigger_logits(batch: dict[str, Tensor], alpha: Tensor, beta: Tensor, temperature: float) -> Tensor:
    h, a, s, mask = (batch[f"sentence_{k}"] for k in ("entropy", "attention", "content", "mask"))
    n = mask.sum(-1).clamp(min=1)
    score = (h * a * s).masked_fill(~mask, float("-inf")).amax(-1)
    theta = alpha * (h * mask).sum(-1) / n + beta * (a * mask).sum(-1) / n
    return (score - theta) / temperature


def entity_logits(batch: dict[str, Tensor], gamma: Tensor, delta: Tensor, threshold: Tensor, temperature: float) -> Tensor:
    h, a, mask = (batch[f"entity_{k}"] for k in ("entropy", "attention", "mask"))
    confidence = (gamma / (1 + h) + delta * a).masked_fill(~mask, float("-inf")).amax(-1)
    return (confidence - threshold) / temperature


class TriggerCalibrator(L.LightningModule):
    """The five parameters, initialised at the given values (MIND's hand-set γ = 1.0, δ = 0.2)."""

    def __init__(
        self,
        alpha: float = 1.0,
        beta: float = 1.0,
        gamma: float = 1.0,
        delta: float = 0.2,
        threshold: float = 0.5,
        temperature: float = 0.1,
        cost: float = 0.0,
        entity_weight: float = 1.0,
        lr: float = 0.05,
        params_path: str | None = None,
    ) -> None:
        super().__init__()
        self.save_hyperparameters()
        for name in PARAMS:
            setattr(self, name, nn.Parameter(torch.tensor(float(getattr(self.hparams, name)))))
        self.val_auroc = nn.ModuleDict({"trigger": BinaryAUROC(), "entity": BinaryAUROC()})
        self.val_label_rate = nn.ModuleDict({"trigger": MeanMetric(), "entity": MeanMetric()})

    def losses(self, batch: dict[str, Tensor]) -> tuple[Tensor, Tensor, Tensor]:
        """(trigger loss with its cost, entity loss, retrieval probabilities)."""
        t = self.hparams.temperature
        logits = trigger_logits(batch, self.alpha, self.beta, t)
        p_retrieve = torch.sigmoid(logits)
        trigger = F.binary_cross_entropy_with_logits(logits, batch["sentence_label"]) if len(logits) else logits.sum()
        trigger = trigger + self.hparams.cost * (p_retrieve.mean() if len(logits) else 0.0)
        e_logits = entity_logits(batch, self.gamma, self.delta, self.threshold, t)
        entity = F.binary_cross_entropy_with_logits(e_logits, batch["entity_label"]) if len(e_logits) else e_logits.sum()
        return trigger, entity, p_retrieve

    def training_step(self, batch: dict[str, Tensor], batch_idx: int) -> Tensor:
        trigger, entity, _ = self.losses(batch)
        loss = trigger + self.hparams.entity_weight * entity
        self.log_dict({"train/loss": loss, "train/trigger_loss": trigger, "train/entity_loss": entity},
                      batch_size=len(batch["sentence_label"]))
        return loss

    def validation_step(self, batch: dict[str, Tensor], batch_idx: int) -> None:
        trigger, entity, p_retrieve = self.losses(batch)
        n = len(batch["sentence_label"])
        if n:
            self._update("trigger", p_retrieve, batch["sentence_label"])
            self.log("val/trigger_rate", (p_retrieve > 0.5).float().mean(), batch_size=n)
        e_logits = entity_logits(batch, self.gamma, self.delta, self.threshold, self.hparams.temperature)
        if len(e_logits):
            self._update("entity", torch.sigmoid(e_logits), batch["entity_label"])
        self.log_dict({"val/loss": trigger + self.hparams.entity_weight * entity, "val/trigger_loss": trigger,
                       "val/entity_loss": entity}, batch_size=max(n, 1))

    def _update(self, kind: str, probabilities: Tensor, labels: Tensor) -> None:
        self.val_auroc[kind].update(probabilities, labels.long())
        self.val_label_rate[kind].update(labels)

    def on_validation_epoch_end(self) -> None:
        for kind in ("trigger", "entity"):
            auroc, label_rate = self.val_auroc[kind], self.val_label_rate[kind]
            if auroc.update_count:
                rate = label_rate.compute()
                self.log(f"val/{kind}_label_rate", rate)
                if 0 < rate < 1:  # AUROC is undefined with one class
                    self.log(f"val/{kind}_auroc", auroc.compute())
            auroc.reset()
            label_rate.reset()

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)

    def params(self) -> dict[str, float]:
        return {name: float(getattr(self, name).detach()) for name in PARAMS}

    def save_params(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.params(), indent=2) + "\n")
        return path

    def on_fit_end(self) -> None:
        if self.hparams.params_path and self.trainer.is_global_zero:
            self.save_params(self.hparams.params_path)
