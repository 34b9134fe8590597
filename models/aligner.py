"""KiRAG's Aligner: one shared bi-encoder trained to score the next triple of a reasoning chain."""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Any

import lightning as L
import numpy as np
import torch
from peft import LoraConfig, get_peft_model
from torch import Tensor
from torchmetrics import MetricCollection
from torchmetrics.retrieval import RetrievalHitRate, RetrievalMRR
from transformers import get_linear_schedule_with_warmup

from losses import ChainContrastiveLoss
from models.encoder import Encoder, EncoderConfig


class AlignerModule(L.LightningModule):
    """Trains the Aligner with `ChainContrastiveLoss`; queries and triples share one encoder.

    Queries (question + chain so far, see `core.chains.aligner_query`) are encoded as the
    "query" kind, triples as the "passage" kind. Validation ranks each positive among its own
    candidates (itself and its negatives): `val/mrr`, `val/r@1`, `val/r@5`.
    `models.export` writes a trained one as a transformers / sentence-transformers folder.

    Args:
        encoder: the base encoder (`EncoderConfig`): `name` (a packaged short name, a folder or a hub
            id), pooling and prefixes (E5: mean, `query: `, `passage: `); `max_length` limits triples
            and `query_max_length` queries.
        temperature: of the InfoNCE loss over cosine similarities.
        lr, weight_decay, warmup_ratio: AdamW with linear warmup then linear decay, stepped per
            optimizer step; biases and norm weights get no weight decay.
        gather_across_devices: score every query against the candidates of all devices.
        lora, lora_r, lora_alpha, lora_dropout, lora_target_modules: train LoRA adapters (PEFT)
            instead of all weights; `None` targets PEFT's default modules for the architecture.
    """

    def __init__(
        self,
        encoder: EncoderConfig = EncoderConfig(max_length=64, query_max_length=256),
        temperature: float = 0.01,
        lr: float = 2e-5,
        weight_decay: float = 0.01,
        warmup_ratio: float = 0.1,
        gather_across_devices: bool = True,
        lora: bool = False,
        lora_r: int = 8,
        lora_alpha: int = 16,
        lora_dropout: float = 0.0,
        lora_target_modules: list[str] | None = None,
    ) -> None:
        super().__init__()
        encoder = EncoderConfig(**encoder) if isinstance(encoder, dict) else encoder  # a checkpoint holds a dict
        self.save_hyperparameters({
            "encoder": asdict(encoder), "temperature": temperature, "lr": lr, "weight_decay": weight_decay,
            "warmup_ratio": warmup_ratio, "gather_across_devices": gather_across_devices, "lora": lora,
            "lora_r": lora_r, "lora_alpha": lora_alpha, "lora_dropout": lora_dropout,
            "lora_target_modules": lora_target_modules,
        })
        self.encoder = Encoder(encoder)
        # BERT-like models carry a pooler that mean/CLS pooling never uses: frozen, it gets no
        # gradient that DDP would wait for, and it is exported unchanged.
        if getattr(self.encoder.model, "pooler", None) is not None:
            self.encoder.model.pooler.requires_grad_(False)
        if lora:
            config = LoraConfig(r=lora_r, lora_alpha=lora_alpha, lora_dropout=lora_dropout,
                                target_modules=lora_target_modules)
            self.encoder.model = get_peft_model(self.encoder.model, config)
        self.loss = ChainContrastiveLoss(temperature, gather_across_devices)
        self.val_metrics = MetricCollection(
            {"mrr": RetrievalMRR(), "r@1": RetrievalHitRate(top_k=1), "r@5": RetrievalHitRate(top_k=5)},
            prefix="val/",
        )
        self.val_results: dict[str, float] = {}  # the latest validation metrics, kept in checkpoints
        self.data_hparams: dict[str, Any] = {}  # the datamodule's settings, kept in checkpoints
        self.train()  # `from_pretrained` returns models in eval mode, with dropout off

    def embed(self, batch: dict[str, Any]) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        """Embed a batch: queries (B, d), positives (B, d), negatives (B, n, d) and their mask, or None."""
        queries = self.encoder(batch["queries"], "query")
        texts = batch["positives"] + [t for negatives in batch["negatives"] for t in negatives]
        unique = {text: i for i, text in enumerate(dict.fromkeys(texts))}
        embedded = self.encoder(list(unique), "passage")
        triples = embedded[torch.tensor([unique[t] for t in texts], device=embedded.device)]
        positives = triples[: len(queries)]
        mask = batch["negative_mask"]
        if mask.shape[1] == 0:
            return queries, positives, None, None
        shape = (*mask.shape, triples.shape[1])
        negatives = triples.new_zeros(shape).masked_scatter(mask.unsqueeze(-1), triples[len(queries):])
        return queries, positives, negatives, mask

    def on_train_batch_start(self, batch: Any, batch_idx: int) -> None:
        # Dropout draws from a generator reseeded at every batch from (seed, epoch, batch, rank):
        # a run resumed from a checkpoint then draws the masks of an uninterrupted one.
        seed = int(os.environ.get("PL_GLOBAL_SEED", 0))
        entropy = [seed, self.current_epoch, batch_idx, self.global_rank]
        torch.manual_seed(int(np.random.SeedSequence(entropy).generate_state(1, np.uint64)[0]))

    def training_step(self, batch: dict[str, Any], batch_idx: int) -> Tensor:
        loss = self.loss(*self.embed(batch))
        self.log("train/loss", loss, prog_bar=True, batch_size=len(batch["queries"]))
        return loss

    def validation_step(self, batch: dict[str, Any], batch_idx: int) -> None:
        queries, positives, negatives, mask = self.embed(batch)
        queries = queries.float()  # cosines in float32: bf16 rounding would create ties in the ranking
        scores = (queries * positives.float()).sum(-1, keepdim=True)
        valid = torch.ones_like(scores, dtype=torch.bool)
        if negatives is not None:
            scores = torch.cat([scores, torch.einsum("bd,bnd->bn", queries, negatives.float())], dim=1)
            valid = torch.cat([valid, mask], dim=1)
        target = torch.zeros_like(valid)
        target[:, 0] = True
        indexes = batch["index"].unsqueeze(1).expand_as(valid)
        # exp: torchmetrics' MRR counts a target scored <= 0 as not retrieved (torchmetrics PR #3104),
        # and cosines can be negative; exp keeps the ranking and makes every score positive.
        self.val_metrics.update(scores[valid].exp(), target[valid], indexes=indexes[valid])
        self.log_dict(self.val_metrics, on_epoch=True, batch_size=len(batch["queries"]))

    def configure_optimizers(self) -> dict[str, Any]:
        decay, no_decay, seen = [], [], set()
        for module in self.modules():
            is_norm = "Norm" in type(module).__name__  # LayerNorm, RMSNorm, model-specific norms
            for name, param in module.named_parameters(recurse=False):
                if not param.requires_grad or id(param) in seen:
                    continue
                seen.add(id(param))
                (no_decay if is_norm or name == "bias" else decay).append(param)
        optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": self.hparams.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
            lr=self.hparams.lr,
        )
        total = int(self.trainer.estimated_stepping_batches)
        scheduler = get_linear_schedule_with_warmup(optimizer, round(self.hparams.warmup_ratio * total), total)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        metrics = self.trainer.callback_metrics
        checkpoint["val_results"] = {k: float(v) for k, v in metrics.items() if k.startswith("val/")}
        datamodule = self.trainer.datamodule
        checkpoint["data_hparams"] = dict(datamodule.hparams) if datamodule is not None else {}

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        self.val_results = checkpoint.get("val_results", {})
        self.data_hparams = checkpoint.get("data_hparams", {})
