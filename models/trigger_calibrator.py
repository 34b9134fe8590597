"""Learns MIND's α, β (retrieval trigger) and γ, δ with a threshold (entity filter) from labelled traces.

Neither paper's code sets these from data. Both decisions are hard comparisons; training uses
their sigmoid relaxations, the formulas of `models.uncertainty`:

    P(retrieve | sentence) = σ((max_w S(w) − θ) / T),    θ = α·mean(H) + β·mean(maxAttn),  S = H·maxAttn·s
    P(keep | entity)       = σ((conf(e) − τ) / T_e),    conf(e) = max_t γ/(1+H_t) + δ·maxAttn_t

A first version, unconstrained on traces with one label per question, learned "always retrieve,
keep no entity" (α, β < 0; δ < 0 with τ above γ). What keeps it from that:
- constraints: α, β, γ, δ = softplus(raw) ≥ 0, and τ = c·σ(raw) below c = γ·u + δ·v, the largest
  confidence a training entity's token can reach (u = max 1/(1+H), v = max maxAttn over them;
  u = v = 1, so c = γ + δ, until the data is seen);
- standardised signals: raw attention is about 1/prompt length, so the parameters' scales differ
  by orders of magnitude (see `models.uncertainty`). At fit start the training data's means become
  the units: m_H and m_A, the mean entropy and attention of the sentences' words, and m_E, the mean
  attention of the entities' tokens. The optimiser moves unitless values, and α = m_A·ᾱ,
  β = m_H·β̄, δ = δ̄/m_E, T = m_H·m_A·T̄: that is the same decision on H/m_H and maxAttn/m_A, so
  ᾱ = β̄ = 1 puts θ at about 2 for a typical sentence, against S ≈ 1 for a typical word;
- class weights, only with `balance_classes`: BCE with pos_weight = negatives/positives of the training
  labels, for the trigger and the entities (1 when a class is absent), so a rare class is not simply
  given up. Off by default: balanced, a trigger cannot learn what the labels say when most sentences
  need retrieval (93% of them in mind_eval's traces), and `cost` is the price that trades calls away;
- the trigger's temperature learned (a log T̄ parameter): it sets the relaxation's sharpness, not the
  hard decision. T_e stays at `temperature`: scaling γ, δ, τ and T_e together changes neither the
  entity decision nor its loss, so T_e only fixes the scale of γ, δ, τ (the decision reads their ratios).

The loss adds `cost` × the mean retrieval probability: a price per retrieval that trades accuracy
for fewer calls. Validation logs, for both decisions, AUROC of the relaxed probability, F1 and the
rate of the hard decision, and the share of positive labels. `params()` and the checkpoint
(`mind_params`) give the values in the formulas' own units, with the attention kind they hold.

At fit end, `check` refuses degenerate values (a trigger that fires on no sentence, or on every one
while most are labelled as not needing retrieval; a threshold no entity reaches): they are logged and
not written. A trigger that fires on every sentence where most need retrieval is what the data asks
for: it is written, with a warning that says so. `MindParams.save` writes the
small JSON that the MIND loop loads (`--mind.params`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from dataclasses import asdict

import lightning as L
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torchmetrics import MeanMetric
from torchmetrics.classification import BinaryAUROC, BinaryF1Score

from models.lm.interface import Attention
from models.uncertainty import ATTENTION_KINDS, MindParams, entity_confidence, entity_logits, trigger_logits

log = logging.getLogger(__name__)

PARAMS = ("alpha", "beta", "gamma", "delta", "threshold")  # the learned values of `MindParams`
KINDS = ("trigger", "entity")


class DegenerateParams(ValueError):
    """Values that make a decision the same on all the data, so MIND would not decide at all."""


def attention_key(prefix: str, attention: Attention) -> str:
    return f"{prefix}_attention" if attention == "raw" else f"{prefix}_attention_in_sentence"


def _rows(batch: dict[str, Tensor], prefix: str, attention: Attention) -> tuple[Tensor, ...]:
    key = attention_key(prefix, attention)
    if key not in batch:
        raise ValueError(f"the traces hold no {key.removeprefix(prefix + '_')} for the {prefix}s: write them again "
                         "with `prepare.py traces`")
    names = ("entropy", "content", "mask") if prefix == "sentence" else ("entropy", "mask")
    h, *rest = (batch[f"{prefix}_{name}"] for name in names)
    return (h, batch[key], *rest)


def check(params: MindParams, batches: Iterable[dict[str, Tensor]]) -> str | None:
    """Raise `DegenerateParams` when, on these collated traces (`datamodules.trigger_traces.collate`), MIND's
    hard trigger fires on no sentence, or on every one while most are labelled as not needing retrieval, or
    no entity reaches the threshold (conf ≥ τ). A trigger that fires on every sentence where most need
    retrieval is sound: the note that says so is returned (None otherwise)."""
    attention = params.attention or "raw"
    fired = sentences = positives = 0
    best = -math.inf  # the highest entity confidence
    for batch in batches:
        h, a, s, mask = _rows(batch, "sentence", attention)
        if len(h):
            fired += int((trigger_logits(h, a, s, mask, params.alpha, params.beta, 1.0) > 0).sum())
            sentences += len(h)
            positives += int(batch["sentence_label"].sum())
        h, a, mask = _rows(batch, "entity", attention)
        if len(h):
            best = max(best, float(entity_confidence(h, a, mask, params.gamma, params.delta).max()))
    values = f"α = {params.alpha:.4g}, β = {params.beta:.4g}"
    if params.threshold is not None and best != -math.inf and best < params.threshold:
        raise DegenerateParams(f"no entity can pass: the threshold {params.threshold:.4g} is above the highest "
                               f"confidence on the data, {best:.4g} (γ = {params.gamma:.4g}, δ = {params.delta:.4g})")
    if not sentences or 0 < fired < sentences:
        return None
    needing = f"{positives} of them labelled as needing retrieval"
    if fired and 2 * positives > sentences:
        return (f"the trigger fires on every one of the {sentences} sentences, as the labels ask ({needing}; "
                f"{values}, {attention} attention): MIND retrieves at every sentence, like fixed interval")
    raise DegenerateParams(f"the trigger fires on {'every one' if fired else 'none'} of the {sentences} sentences "
                           f"({needing}; {values}, {attention} attention)")


def inverse_softplus(x: float) -> float:
    return x + math.log(-math.expm1(-x))


class TriggerCalibrator(L.LightningModule):
    """The `MindParams`, learned from `initial` in standardised units (see the module docstring).

    Args:
        initial: the starting values, in the units of signals divided by their training means
            (the formulas' own units until the fit starts); α, β, γ, δ > 0, and the threshold must
            be set (it is learned too), between 0 and γ + δ.
        temperature: the starting T̄ of the trigger (learned) and T_e of the entities (fixed).
        cost: the price of one retrieval, in units of the BCE loss.
        balance_classes: weight each decision's classes inversely to their counts (see the module docstring).
        entity_weight: the weight of the entity loss against the trigger loss.
        lr: Adam's learning rate.
        attention: the kind of maxAttn to calibrate (MIND must read the same: `mind.attention`).
        params_path: where the learned values are written at the end of `fit` (`MindParams.save`).
    """

    def __init__(
        self,
        initial: MindParams = MindParams(threshold=0.5),
        temperature: float = 0.1,
        cost: float = 0.0,
        balance_classes: bool = False,
        entity_weight: float = 1.0,
        lr: float = 0.05,
        attention: Attention = "raw",
        params_path: str | None = None,
    ) -> None:
        super().__init__()
        initial = MindParams(**initial) if isinstance(initial, dict) else initial  # a checkpoint holds a dict
        if initial.threshold is None:
            raise ValueError("initial.threshold must be a number: the calibration learns the entity threshold")
        if min(initial.alpha, initial.beta, initial.gamma, initial.delta, temperature) <= 0:
            raise ValueError("initial α, β, γ, δ and the temperature must be positive: they are kept ≥ 0")
        if not 0 < initial.threshold < initial.gamma + initial.delta:
            raise ValueError(f"initial.threshold must be in (0, γ + δ = {initial.gamma + initial.delta}): "
                             "above, no entity could pass")
        if attention not in ATTENTION_KINDS:
            raise ValueError(f"attention must be one of {', '.join(ATTENTION_KINDS)}, got {attention!r}")
        self.save_hyperparameters({"initial": asdict(initial), "temperature": temperature, "cost": cost,
                                   "balance_classes": balance_classes, "entity_weight": entity_weight, "lr": lr,
                                   "attention": attention, "params_path": params_path})
        raw = {name: inverse_softplus(getattr(initial, name)) for name in ("alpha", "beta", "gamma", "delta")}
        share = initial.threshold / (initial.gamma + initial.delta)
        raw |= {"threshold": math.log(share / (1 - share)), "log_temperature": math.log(temperature)}
        self.raw = nn.ParameterDict({name: nn.Parameter(torch.tensor(value)) for name, value in raw.items()})
        # the data's units (m_H, m_A, m_E), the confidence bound (u, v), the class weights; set at fit start
        for name in ("m_h", "m_a", "m_e", "u", "v", "pos_weight_trigger", "pos_weight_entity"):
            self.register_buffer(name, torch.tensor(1.0))
        self.register_buffer("standardised", torch.tensor(False))
        self.val_metrics = nn.ModuleDict({kind: nn.ModuleDict({"auroc": BinaryAUROC(), "f1": BinaryF1Score(),
                                                               "rate": MeanMetric(), "label_rate": MeanMetric()})
                                          for kind in KINDS})

    # -- the values in the formulas' units ---------------------------------------------------

    @property
    def alpha(self) -> Tensor:
        return self.m_a * F.softplus(self.raw["alpha"])

    @property
    def beta(self) -> Tensor:
        return self.m_h * F.softplus(self.raw["beta"])

    @property
    def gamma(self) -> Tensor:
        return F.softplus(self.raw["gamma"])

    @property
    def delta(self) -> Tensor:
        return F.softplus(self.raw["delta"]) / self.m_e

    @property
    def threshold(self) -> Tensor:
        return (self.gamma * self.u + self.delta * self.v) * torch.sigmoid(self.raw["threshold"])

    @property
    def temperature(self) -> Tensor:
        """The trigger's T, in the formulas' units."""
        return self.m_h * self.m_a * self.raw["log_temperature"].exp()

    def params(self) -> MindParams:
        return MindParams(**{name: float(getattr(self, name).detach()) for name in PARAMS},
                          attention=self.hparams.attention)

    # -- the data's units, at fit start ------------------------------------------------------

    def standardise(self, batches: Iterable[dict[str, Tensor]]) -> None:
        """Set the units, the confidence bound and the class weights from the training batches."""
        sums = torch.zeros(5, dtype=torch.float64)  # word entropy, word attention, words, token attention, tokens
        labels = {kind: torch.zeros(2, dtype=torch.float64) for kind in KINDS}  # negatives, positives
        u = v = 0.0
        for batch in batches:
            h, a, _, mask = _rows(batch, "sentence", self.hparams.attention)
            eh, ea, emask = _rows(batch, "entity", self.hparams.attention)
            sums += torch.tensor([float(h[mask].sum()), float(a[mask].sum()), float(mask.sum()),
                                  float(ea[emask].sum()), float(emask.sum())], dtype=torch.float64)
            if emask.any():
                u, v = max(u, float((1 / (1 + eh[emask])).max())), max(v, float(ea[emask].max()))
            for kind, key in (("trigger", "sentence_label"), ("entity", "entity_label")):
                labels[kind] += torch.stack([(batch[key] == 0).sum(), (batch[key] == 1).sum()]).double()
        mean = lambda total, count: total / count if count and total > 0 else 1.0
        values = {"m_h": mean(sums[0], sums[2]), "m_a": mean(sums[1], sums[2]), "m_e": mean(sums[3], sums[4]),
                  "u": u or 1.0, "v": v or 1.0}
        for kind in KINDS:
            negatives, positives = labels[kind].tolist()
            balanced = self.hparams.balance_classes and negatives and positives
            values[f"pos_weight_{kind}"] = negatives / positives if balanced else 1.0
        for name, value in values.items():
            getattr(self, name).fill_(float(value))
        self.standardised.fill_(True)
        log.info("trigger calibration units: %s", ", ".join(f"{k} = {float(v):.4g}" for k, v in values.items()))

    def on_fit_start(self) -> None:
        if self.trainer.datamodule is None:
            raise ValueError("the TriggerCalibrator takes its units from the training data: fit it with a datamodule")
        if not self.standardised:  # a checkpoint being resumed keeps its own
            self.standardise(self.trainer.datamodule.train_dataloader())

    # -- the losses ------------------------------------------------------------------------------

    def trigger_logits(self, batch: dict[str, Tensor]) -> Tensor:
        return trigger_logits(*_rows(batch, "sentence", self.hparams.attention), self.alpha, self.beta,
                              self.temperature)

    def entity_logits(self, batch: dict[str, Tensor]) -> Tensor:
        return entity_logits(*_rows(batch, "entity", self.hparams.attention), self.gamma, self.delta, self.threshold,
                             self.hparams.temperature)

    def losses(self, batch: dict[str, Tensor]) -> tuple[Tensor, Tensor, Tensor]:
        """(trigger loss with its cost, entity loss, retrieval probabilities)."""
        logits = self.trigger_logits(batch)
        p_retrieve = torch.sigmoid(logits)
        trigger = (F.binary_cross_entropy_with_logits(logits, batch["sentence_label"],
                                                      pos_weight=self.pos_weight_trigger)
                   + self.hparams.cost * p_retrieve.mean()) if len(logits) else logits.sum()
        e_logits = self.entity_logits(batch)
        entity = (F.binary_cross_entropy_with_logits(e_logits, batch["entity_label"], pos_weight=self.pos_weight_entity)
                  if len(e_logits) else e_logits.sum())
        return trigger, entity, p_retrieve

    def training_step(self, batch: dict[str, Tensor], batch_idx: int) -> Tensor:
        trigger, entity, _ = self.losses(batch)
        loss = trigger + self.hparams.entity_weight * entity
        self.log_dict({"train/loss": loss, "train/trigger_loss": trigger, "train/entity_loss": entity},
                      batch_size=len(batch["sentence_label"]))
        return loss

    # -- validation: the relaxed ranking and the hard decision --------------------------------

    def validation_step(self, batch: dict[str, Tensor], batch_idx: int) -> None:
        trigger, entity, _ = self.losses(batch)
        for kind, logits, labels in (("trigger", self.trigger_logits(batch), batch["sentence_label"]),
                                     ("entity", self.entity_logits(batch), batch["entity_label"])):
            if len(logits):  # MIND retrieves when max S > θ, keeps an entity when conf ≥ τ
                hard = logits > 0 if kind == "trigger" else logits >= 0
                metrics = self.val_metrics[kind]
                metrics["auroc"].update(torch.sigmoid(logits), labels.long())
                metrics["f1"].update(hard.long(), labels.long())
                metrics["rate"].update(hard.float())
                metrics["label_rate"].update(labels)
        self.log_dict({"val/loss": trigger + self.hparams.entity_weight * entity, "val/trigger_loss": trigger,
                       "val/entity_loss": entity}, batch_size=max(len(batch["sentence_label"]), 1))

    def on_validation_epoch_end(self) -> None:
        for kind in KINDS:
            metrics = self.val_metrics[kind]
            if metrics["auroc"].update_count:
                label_rate = metrics["label_rate"].compute()
                self.log_dict({f"val/{kind}_label_rate": label_rate, f"val/{kind}_rate": metrics["rate"].compute(),
                               f"val/{kind}_f1": metrics["f1"].compute()})
                if 0 < label_rate < 1:  # AUROC is undefined with one class
                    self.log(f"val/{kind}_auroc", metrics["auroc"].compute())
            for metric in metrics.values():
                metric.reset()

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)

    # -- the result ----------------------------------------------------------------------------

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint["mind_params"] = asdict(self.params())

    def on_fit_end(self) -> None:
        """Check the learned values on the training and validation traces; write them only when sound."""
        if not self.trainer.is_global_zero:
            return
        data = self.trainer.datamodule
        try:
            note = check(self.params(), [*data.train_dataloader(), *data.val_dataloader()])
        except DegenerateParams as error:
            where = f"{self.hparams.params_path} not written" if self.hparams.params_path else "degenerate parameters"
            log.warning("%s: %s", where, error)
            return
        if note:
            log.warning("%s", note)
        if self.hparams.params_path:
            self.params().save(self.hparams.params_path)
