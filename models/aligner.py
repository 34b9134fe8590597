"""KiRAG's Aligner: one shared bi-encoder trained to score the next triple of a reasoning chain."""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Any

import lightning as L
import numpy as np
import torch
from peft import LoraConfig, get_peft_model
from torch import Tensor, nn
from torchmetrics import MetricCollection
from torchmetrics.retrieval import RetrievalHitRate, RetrievalMRR
from transformers import get_linear_schedule_with_warmup

from core.config import non_finite
from core.records import DataError, checkpoint_file
from losses import ChainContrastiveLoss, cached_loss
from models.encoder import Encoder, EncoderConfig


def retrieval_metrics(prefix: str, empty_target_action: str = "neg") -> MetricCollection:
    """MRR, R@1 and R@5 of the positive among its own candidates, logged as `{prefix}mrr` and so on."""
    return MetricCollection({
        "mrr": RetrievalMRR(empty_target_action=empty_target_action),
        "r@1": RetrievalHitRate(top_k=1, empty_target_action=empty_target_action),
        "r@5": RetrievalHitRate(top_k=5, empty_target_action=empty_target_action),
    }, prefix=prefix)


def adamw(model: nn.Module, lr: float, weight_decay: float) -> torch.optim.AdamW:
    """The Aligner's optimizer: AdamW over the trainable parameters of `model`, each once; biases and norm
    weights get no weight decay."""
    decay, no_decay, seen = [], [], set()
    for module in model.modules():
        is_norm = "Norm" in type(module).__name__  # LayerNorm, RMSNorm, model-specific norms
        for name, param in module.named_parameters(recurse=False):
            if not param.requires_grad or id(param) in seen:
                continue
            seen.add(id(param))
            (no_decay if is_norm or name == "bias" else decay).append(param)
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=lr,
        fused=True,  # one kernel for every parameter: 8x faster than the per-tensor loop on a CPU
    )


class AlignerModule(L.LightningModule):
    """Trains the Aligner with `ChainContrastiveLoss`; queries and triples share one encoder.

    Queries (question + chain so far, see `core.chains.aligner_query`) are encoded as the
    "query" kind, triples as the "passage" kind. Validation ranks each positive among its own
    candidates (itself and its negatives): `val/mrr`, `val/r@1`, `val/r@5`, and with several
    datasets (`AlignerDataModule.val_dataset_names`) the same per dataset: `val/<name>/mrr`, ...
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
        cache_mini_batch: train with a gradient cache (`losses.cached_loss`, GradCache): embed at most
            this many texts per forward pass, first all of them without gradients, then the loss and
            its gradients with respect to the embeddings, then each mini-batch again with gradients.
            The activations of one mini-batch are in memory at a time, so the batch (512+ queries
            with their candidates) need not fit; the price is a second forward pass per step and one
            gradient-sized buffer. The loss and the parameter gradients are those of
            the plain step that embeds the same mini-batches (queries, then the distinct triples)
            with gradients: the same as `None` when one mini-batch holds every query and every
            distinct triple, and with dropout off for any size (otherwise dropout is drawn per
            mini-batch; each mini-batch's masks are replayed exactly). Automatic optimization is
            kept, so DDP (each gradient all-reduced once per step), `gather_across_devices`, the
            Trainer's `gradient_clip_val` and `accumulate_grad_batches`, and 16-mixed precision
            (its loss scale applied to the mini-batch backward passes) work as without it; sharded
            strategies (FSDP, DeepSpeed) are not supported.
            Validation embeds in mini-batches of this size too. `None`: one forward pass with
            gradients for the queries and one for the distinct triples.
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
        cache_mini_batch: int | None = None,
    ) -> None:
        super().__init__()
        if cache_mini_batch is not None and cache_mini_batch < 1:
            raise ValueError(f"cache_mini_batch must be a positive number of texts or None, got {cache_mini_batch}")
        encoder = EncoderConfig(**encoder) if isinstance(encoder, dict) else encoder  # a checkpoint holds a dict
        self.save_hyperparameters({
            "encoder": asdict(encoder), "temperature": temperature, "lr": lr, "weight_decay": weight_decay,
            "warmup_ratio": warmup_ratio, "gather_across_devices": gather_across_devices, "lora": lora,
            "lora_r": lora_r, "lora_alpha": lora_alpha, "lora_dropout": lora_dropout,
            "lora_target_modules": lora_target_modules, "cache_mini_batch": cache_mini_batch,
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
        self.val_metrics = retrieval_metrics("val/")
        self.val_dataset_metrics = nn.ModuleDict()  # "dataset_<name>": metrics per dataset, see `add_dataset_metrics`
        self.val_results: dict[str, float] = {}  # the latest validation metrics, kept in checkpoints
        self.data_hparams: dict[str, Any] = {}  # the datamodule's settings, kept in checkpoints
        self.train()  # `from_pretrained` returns models in eval mode, with dropout off

    def embed(self, batch: dict[str, Any]) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        """Embed a batch: queries (B, d), positives (B, d), negatives (B, n, d) and their mask, or None."""
        mini_batches, index = self._mini_batches(batch)
        return self._arrange(batch, mini_batches, [self._encode(m) for m in mini_batches], index)

    def _mini_batches(self, batch: dict[str, Any]) -> tuple[list[tuple[str, list[str]]], list[int]]:
        """What `embed` encodes, as (kind, texts) forward passes in order: the queries, then each distinct
        triple text once, `cache_mini_batch` texts a pass (all in one pass each if None); and the index
        of every positive, then every negative (in batch order), among the distinct triple texts."""
        texts = batch["positives"] + [t for negatives in batch["negatives"] for t in negatives]
        unique = {text: i for i, text in enumerate(dict.fromkeys(texts))}
        queries, distinct = batch["queries"], list(unique)
        size = self.hparams.cache_mini_batch or max(len(queries), len(distinct), 1)
        mini_batches = [("query", queries[i : i + size]) for i in range(0, len(queries), size)]
        mini_batches += [("passage", distinct[i : i + size]) for i in range(0, len(distinct), size)]
        return mini_batches, [unique[t] for t in texts]

    def _encode(self, mini_batch: tuple[str, list[str]]) -> Tensor:
        kind, texts = mini_batch
        return self.encoder(texts, kind)

    @staticmethod
    def _arrange(
        batch: dict[str, Any], mini_batches: list[tuple[str, list[str]]], embedded: list[Tensor], index: list[int]
    ) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        """Lay the embeddings of `_mini_batches` out as `embed` returns them."""
        def joined(kind: str) -> Tensor:
            parts = [e for (k, _), e in zip(mini_batches, embedded) if k == kind]
            return parts[0] if len(parts) == 1 else torch.cat(parts)

        queries, distinct = joined("query"), joined("passage")
        triples = distinct[torch.tensor(index, device=distinct.device)]
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

    def training_loss(self, batch: dict[str, Any]) -> Tensor:
        """The training loss of a batch, with `cache_mini_batch`'s gradient cache when it is set."""
        if self.hparams.cache_mini_batch is None:
            return self.loss(*self.embed(batch))
        mini_batches, index = self._mini_batches(batch)
        trainer = self._trainer
        scaler = getattr(trainer.precision_plugin, "scaler", None) if trainer is not None else None
        grad_scale = float(scaler.get_scale()) if scaler is not None and scaler.is_enabled() else 1.0
        return cached_loss(
            self._encode,
            mini_batches,
            lambda embedded: self.loss(*self._arrange(batch, mini_batches, embedded, index)),
            self.parameters(),
            grad_scale=grad_scale,
        )

    def training_step(self, batch: dict[str, Any], batch_idx: int) -> Tensor:
        loss = self.training_loss(batch)
        self.log("train/loss", loss, prog_bar=True, batch_size=len(batch["queries"]))
        return loss

    def setup(self, stage: str) -> None:
        datamodule = self.trainer.datamodule
        self.add_dataset_metrics(getattr(datamodule, "val_dataset_names", []) if datamodule is not None else [])

    def add_dataset_metrics(self, names: list[str]) -> None:
        """Validation metrics per dataset (`val/<name>/mrr`, ...), for the datasets of `batch["datasets"]`.

        Each dataset's metrics see every query of a batch, the other datasets' with no positive:
        those are skipped, so each one ranks exactly its own queries, and every rank updates every
        dataset's metrics at every step, as their synchronisation across devices needs.
        """
        for name in names:  # keys with a prefix: a dataset may be called `train` or `eval`, as Module methods are
            if f"dataset_{name}" not in self.val_dataset_metrics:
                self.val_dataset_metrics[f"dataset_{name}"] = retrieval_metrics(f"val/{name}/", "skip").to(self.device)

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
        preds = scores[valid].exp()
        self.val_metrics.update(preds, target[valid], indexes=indexes[valid])
        self.log_dict(self.val_metrics, on_epoch=True, batch_size=len(batch["queries"]))
        for key, metrics in self.val_dataset_metrics.items():
            mine = torch.tensor([f"dataset_{d}" == key for d in batch["datasets"]], device=target.device).unsqueeze(1)
            metrics.update(preds, (target & mine)[valid], indexes=indexes[valid])
            self.log_dict(metrics, on_epoch=True, batch_size=len(batch["queries"]))

    def configure_optimizers(self) -> dict[str, Any]:
        optimizer = adamw(self, self.hparams.lr, self.hparams.weight_decay)
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

    @classmethod
    def from_checkpoint(cls, path: str | os.PathLike) -> AlignerModule:
        """The Aligner of a `train.py` checkpoint, on the CPU; a missing, truncated or foreign file, or one
        whose weights are not all finite (a diverged run), is refused in one line naming it."""
        checkpoint_file(path, "Aligner checkpoint")
        try:
            module = cls.load_from_checkpoint(path, map_location="cpu")
        except Exception as error:
            reason = " ".join(str(error).split()).split(". ")[0][:160]  # torch's first sentence says what failed
            raise DataError(path, None, "not an Aligner checkpoint that train.py wrote, or a truncated one "
                                        f"({type(error).__name__}: {reason})") from error
        if (found := non_finite(module.state_dict())) is not None:
            raise DataError(path, None, f"the weight {found[0]} holds NaN or infinite values: the training that "
                                        "wrote it diverged; train again (lower the learning rate)")
        return module


def checkpoint_encoder(path: str | os.PathLike) -> Encoder:
    """The Aligner's encoder of a `train.py` checkpoint (`AlignerModule.from_checkpoint`), on the CPU, for inference."""
    return AlignerModule.from_checkpoint(path).encoder.eval()
