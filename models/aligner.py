"""KiRAG's Aligner: one shared bi-encoder trained to score the next triple of a reasoning chain."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch
import transformers
from huggingface_hub import HfApi, ModelCard, ModelCardData
from huggingface_hub.errors import HfHubHTTPError, HFValidationError
from peft import LoraConfig, PeftModel, get_peft_model
from torch import Tensor
from torchmetrics import MetricCollection
from torchmetrics.retrieval import RetrievalHitRate, RetrievalMRR
from transformers import get_linear_schedule_with_warmup

from losses import ChainContrastiveLoss
from models.encoder import PACKAGED_MINILM, Encoder, Pooling

PACKAGED_MINILM_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"


class AlignerModule(L.LightningModule):
    """Trains the Aligner with `ChainContrastiveLoss`; queries and triples share one encoder.

    Queries (question + chain so far, see `datamodules.chains.aligner_query`) are encoded as the
    "query" kind, triples as the "passage" kind. Validation ranks each positive among its own
    candidates (itself and its negatives): `val/mrr`, `val/r@1`, `val/r@5`.

    Args:
        model: a packaged short name (`minilm`), a local folder or a hub id.
        pooling, query_prefix, passage_prefix: as in `Encoder` (E5: mean, `query: `, `passage: `).
        query_max_length, triple_max_length: token limits of queries and triples.
        temperature: of the InfoNCE loss over cosine similarities.
        lr, weight_decay, warmup_ratio: AdamW with linear warmup then linear decay, stepped per
            optimizer step; biases and norm weights get no weight decay.
        gather_across_devices: score every query against the candidates of all devices.
        lora, lora_r, lora_alpha, lora_dropout, lora_target_modules: train LoRA adapters (PEFT)
            instead of all weights; `None` targets PEFT's default modules for the architecture.
    """

    def __init__(
        self,
        model: str = "minilm",
        pooling: Pooling = "mean",
        query_prefix: str = "",
        passage_prefix: str = "",
        query_max_length: int = 256,
        triple_max_length: int = 64,
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
        self.save_hyperparameters()
        self.encoder = Encoder(
            model,
            pooling=pooling,
            query_prefix=query_prefix,
            passage_prefix=passage_prefix,
            max_length=triple_max_length,
            query_max_length=query_max_length,
        )
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

    def export(self, folder: str | Path) -> Path:
        """Write a folder that `transformers.AutoModel` and sentence-transformers both load, with a model card.

        LoRA adapters are merged into the weights. sentence-transformers prompts `query` and
        `document` hold the query and passage prefixes.
        """
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        model = self.encoder.model
        if isinstance(model, PeftModel):
            model = copy.deepcopy(model).merge_and_unload()
        model.save_pretrained(folder)
        self.encoder.tokenizer.save_pretrained(folder)
        _write_sentence_transformers_config(folder, self.encoder, self.hparams.query_max_length)
        _model_card(self.hparams, self.data_hparams, self.val_results).save(folder / "README.md")
        return folder


def _write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n")


def _write_sentence_transformers_config(folder: Path, encoder: Encoder, max_seq_length: int) -> None:
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    if encoder.normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
    _write_json(folder / "modules.json", modules)
    # One length for both kinds: the query's, the longer. Triples were trained at their own, shorter one.
    _write_json(folder / "sentence_bert_config.json", {"max_seq_length": max_seq_length, "do_lower_case": False})
    modes = ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens", "lasttoken")
    pooling = {"cls": "cls_token", "mean": "mean_tokens"}[encoder.pooling]
    _write_json(folder / "1_Pooling" / "config.json", {
        "word_embedding_dimension": encoder.dim,
        **{f"pooling_mode_{mode}": mode == pooling for mode in modes},
        "include_prompt": True,  # the Encoder pools over the prefix tokens too
    })
    _write_json(folder / "config_sentence_transformers.json", {
        "model_type": "SentenceTransformer",
        "__version__": {"transformers": transformers.__version__, "pytorch": torch.__version__},
        "prompts": {"query": encoder.prefixes["query"], "document": encoder.prefixes["passage"]},
        "default_prompt_name": None,
        "similarity_fn_name": "cosine",
    })


def _base_model(model: str) -> str:
    return PACKAGED_MINILM_HUB_ID if model.lower() in PACKAGED_MINILM else model


def _model_card(hparams: Any, data: dict[str, Any], metrics: dict[str, float]) -> ModelCard:
    base = _base_model(hparams["model"])
    card_data = ModelCardData(
        base_model=None if os.path.exists(os.path.expanduser(base)) else base,
        library_name="sentence-transformers",
        pipeline_tag="sentence-similarity",
        tags=["sentence-transformers", "feature-extraction", "multi-hop-retrieval", "kirag-aligner"],
    )
    settings = {k: v for k, v in {**dict(hparams), **data}.items() if not k.startswith("_")}
    settings = "\n".join(f"| {k} | {json.dumps(v)} |" for k, v in settings.items())
    results = "\n".join(f"| {k} | {v:.4f} |" for k, v in metrics.items()) or "| (none recorded) | |"
    prefixes = hparams["query_prefix"] or hparams["passage_prefix"]
    prefixes = (f"Queries take the prefix {json.dumps(hparams['query_prefix'])} (sentence-transformers prompt "
                f"`query`), triples {json.dumps(hparams['passage_prefix'])} (prompt `document`)."
                if prefixes else "Queries and triples take no prefix.")
    body = f"""
# KiRAG Aligner fine-tuned from {base}

A bi-encoder that scores knowledge triples `<head; relation; tail>` as the next step of a
reasoning chain: the Aligner of KiRAG (knowledge-driven iterative retrieval). The query is the
question alone at the first hop, else `{{question}}\\nknowledge triples: {{t1}}. {{t2}}.`.
{prefixes} Embeddings are L2-normalised; score by cosine.

- Base model: `{base}`
- Training data: silver reasoning chains `{data.get("chains", "unknown")}`, with candidate negatives
  mined from the documents retrieved for each chain prefix.
- Loss: InfoNCE over cosine / temperature, with candidate and in-batch negatives.

## Validation (the positive ranked among its own candidates)

| metric | value |
|---|---|
{results}

## Training settings

| setting | value |
|---|---|
{settings}
"""
    return ModelCard(f"---\n{card_data.to_yaml()}\n---\n{body}")


def push_to_hub(folder: str | Path, repo_id: str, token: str | None = None, private: bool = True) -> str:
    """Upload an exported folder to a (private by default) model repository; return the commit URL."""
    if not Path(folder).is_dir():
        raise FileNotFoundError(f"no exported model folder at {folder}")
    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, private=private, exist_ok=True)
        commit = api.upload_folder(repo_id=repo_id, folder_path=folder, commit_message="Upload KiRAG Aligner")
    except HFValidationError:
        raise
    except HfHubHTTPError as err:  # the hub answered with an error: authentication, permissions, ...
        raise RuntimeError(f"the Hugging Face hub refused to push {folder} to {repo_id}: {err}") from err
    except Exception as err:  # offline mode, DNS, refused connection, timeout: errors of the HTTP library
        raise RuntimeError(f"could not reach the Hugging Face hub to push {folder} to {repo_id}: {err}") from err
    return str(commit.commit_url)
