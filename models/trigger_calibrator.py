"""Learns MIND's α, β (retrieval trigger) and γ, δ with a threshold (entity filter) from labelled traces.

Neither paper's code sets these from data. Both decisions are hard comparisons; training uses
their sigmoid relaxations at a fixed temperature T (which also fixes the scale of the parameters),
the formulas of `models.uncertainty`:

    P(retrieve | sentence) = σ((max_w S(w) − θ) / T),    θ = α·mean(H) + β·mean(maxAttn),  S = H·maxAttn·s
    P(keep | entity)       = σ((conf(e) − τ) / T),      conf(e) = max_t γ/(1+H_t) + δ·maxAttn_t

The loss is BCE on both, plus `cost` × the mean retrieval probability: a price per retrieval that
trades accuracy for fewer calls. Validation logs the hard trigger rate, the share of positive
labels and, when both labels occur, AUROC (torchmetrics).
`MindParams.save` writes the small JSON that the MIND loop loads (`--mind.params`).
"""

from __future__ import annotations

from dataclasses import asdict, fields

import lightning as L
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torchmetrics import MeanMetric
from torchmetrics.classification import BinaryAUROC

from models.uncertainty import MindParams, entity_logits, trigger_logits

PARAMS = tuple(f.name for f in fields(MindParams))


class TriggerCalibrator(L.LightningModule):
    """The `MindParams`, learned from `initial` (MIND's hand-set γ = 1.0, δ = 0.2, and an entity threshold).

    Args:
        initial: the starting values; the entity threshold must be set (it is learned too).
        temperature: T of both relaxations.
        cost: the price of one retrieval, in units of the BCE loss.
        entity_weight: the weight of the entity loss against the trigger loss.
        lr: Adam's learning rate.
        params_path: where the learned values are written at the end of `fit` (`MindParams.save`).
    """

    def __init__(
        self,
        initial: MindParams = MindParams(threshold=0.5),
        temperature: float = 0.1,
        cost: float = 0.0,
        entity_weight: float = 1.0,
        lr: float = 0.05,
        params_path: str | None = None,
    ) -> None:
        super().__init__()
        initial = MindParams(**initial) if isinstance(initial, dict) else initial  # a checkpoint holds a dict
        if initial.threshold is None:
            raise ValueError("initial.threshold must be a number: the calibration learns the entity threshold")
        self.save_hyperparameters({"initial": asdict(initial), "temperature": temperature, "cost": cost,
                                   "entity_weight": entity_weight, "lr": lr, "params_path": params_path})
        for name in PARAMS:
            setattr(self, name, nn.Parameter(torch.tensor(float(getattr(initial, name)))))
        self.val_auroc = nn.ModuleDict({"trigger": BinaryAUROC(), "entity": BinaryAUROC()})
        self.val_label_rate = nn.ModuleDict({"trigger": MeanMetric(), "entity": MeanMetric()})

    def trigger_logits(self, batch: dict[str, Tensor]) -> Tensor:
        h, a, s, mask = (batch[f"sentence_{k}"] for k in ("entropy", "attention", "content", "mask"))
        return trigger_logits(h, a, s, mask, self.alpha, self.beta, self.hparams.temperature)

    def entity_logits(self, batch: dict[str, Tensor]) -> Tensor:
        h, a, mask = (batch[f"entity_{k}"] for k in ("entropy", "attention", "mask"))
        return entity_logits(h, a, mask, self.gamma, self.delta, self.threshold, self.hparams.temperature)

    def losses(self, batch: dict[str, Tensor]) -> tuple[Tensor, Tensor, Tensor]:
        """(trigger loss with its cost, entity loss, retrieval probabilities)."""
        logits = self.trigger_logits(batch)
        p_retrieve = torch.sigmoid(logits)
        trigger = F.binary_cross_entropy_with_logits(logits, batch["sentence_label"]) if len(logits) else logits.sum()
        trigger = trigger + self.hparams.cost * (p_retrieve.mean() if len(logits) else 0.0)
        e_logits = self.entity_logits(batch)
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
        e_logits = self.entity_logits(batch)
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

    def params(self) -> MindParams:
        return MindParams(**{name: float(getattr(self, name).detach()) for name in PARAMS})

    def on_fit_end(self) -> None:
        if self.hparams.params_path and self.trainer.is_global_zero:
            self.params().save(self.hparams.params_path)
