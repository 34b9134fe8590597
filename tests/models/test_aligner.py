"""AlignerModule: embedding layout, loss, validation metrics, optimizer groups, export, LoRA, hub errors."""

import json
from types import SimpleNamespace

import huggingface_hub.constants
import pytest
import torch
from torch import nn
from transformers import AutoModel, AutoTokenizer

from datamodules.aligner_datamodule import collate
from models.aligner import AlignerModule, push_to_hub
from models.encoder import Encoder

TEXTS = ["who was born in the city", "<river; flows through; city>", "<band; released; album>"]


@pytest.fixture
def model_dir(tmp_path, make_tiny_encoder):
    """A tiny random BERT saved as a folder, as a user's local model would be."""
    encoder = make_tiny_encoder()
    encoder.model.save_pretrained(tmp_path / "tiny")
    encoder.tokenizer.save_pretrained(tmp_path / "tiny")
    return str(tmp_path / "tiny")


def a_batch() -> dict:
    examples = [
        {"index": 0, "question_id": "q0", "query": "who is the band", "positive": "<band; formed in; city>",
         "negatives": ["<band; released; album>", "<river; in; city>"]},
        {"index": 1, "question_id": "q1", "query": "which river", "positive": "<river; in; city>", "negatives": []},
        {"index": 2, "question_id": "q2", "query": "what film", "positive": "<film; by; band>",
         "negatives": ["<film; is; film>"]},
    ]
    return collate(examples)


def test_embed_lays_out_negatives_by_mask(model_dir):
    module = AlignerModule(model=model_dir).eval()
    batch = a_batch()
    with torch.no_grad():
        queries, positives, negatives, mask = module.embed(batch)
        alone = module.encoder(["<river; in; city>", "<film; is; film>"], "passage")
    assert queries.shape == positives.shape == (3, 32) and negatives.shape == (3, 2, 32)
    assert mask.tolist() == [[True, True], [False, False], [True, False]]
    torch.testing.assert_close(negatives[0, 1], alone[0])  # the same text as positive 1: embedded once
    torch.testing.assert_close(positives[1], alone[0])
    torch.testing.assert_close(negatives[2, 0], alone[1])
    assert negatives[1].abs().sum() == 0 and negatives[2, 1].abs().sum() == 0


def test_training_step_gives_a_finite_loss_with_gradients(model_dir):
    module = AlignerModule(model=model_dir, temperature=0.05)
    loss = module.training_step(a_batch(), 0)
    loss.backward()
    assert torch.isfinite(loss) and loss > 0
    grads = [p.grad for p in module.encoder.model.encoder.parameters()]
    assert all(g is not None for g in grads) and any(g.abs().sum() > 0 for g in grads)
    assert all(p.grad is None for p in module.encoder.model.pooler.parameters())  # frozen, unused


def test_validation_ranks_each_positive_among_its_own_candidates(model_dir, monkeypatch):
    module = AlignerModule(model=model_dir)
    q = torch.tensor([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    pos = torch.tensor([[0.9, 0.1], [0.0, 1.0], [1.0, 0.0]])
    negs = torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[5.0, 5.0], [9.0, 0.0]], [[0.5, 0.5], [9.0, 0.0]]])
    mask = torch.tensor([[True, True], [False, False], [True, False]])
    monkeypatch.setattr(module, "embed", lambda batch: (q, pos, negs, mask))
    module.validation_step(a_batch(), 0)
    results = {k: float(v) for k, v in module.val_metrics.compute().items()}
    # Ranks of the positives: 2nd of 3; 1st of 1 (its negatives are padding); 1st of 2.
    assert results == pytest.approx({"val/mrr": (0.5 + 1 + 1) / 3, "val/r@1": 2 / 3, "val/r@5": 1.0})


def test_no_weight_decay_on_biases_and_norms_and_linear_warmup(model_dir):
    module = AlignerModule(model=model_dir, lr=1e-3, weight_decay=0.01, warmup_ratio=0.1)
    module.trainer = SimpleNamespace(estimated_stepping_batches=100)
    config = module.configure_optimizers()
    optimizer, scheduler = config["optimizer"], config["lr_scheduler"]["scheduler"]
    assert config["lr_scheduler"]["interval"] == "step"
    decay, no_decay = optimizer.param_groups
    assert (decay["weight_decay"], no_decay["weight_decay"]) == (0.01, 0.0)
    expected_no_decay = {
        id(p) for m in module.modules() for n, p in m.named_parameters(recurse=False)
        if n == "bias" or isinstance(m, nn.LayerNorm)
    } - {id(p) for p in module.encoder.model.pooler.parameters()}
    assert {id(p) for p in no_decay["params"]} == expected_no_decay
    assert all(p.dim() == 2 for p in decay["params"])  # weight matrices and embeddings
    assert len(decay["params"]) + len(no_decay["params"]) == sum(p.requires_grad for p in module.parameters())
    lrs = []
    for _ in range(100):
        lrs.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    assert lrs[0] == 0 and lrs[5] == pytest.approx(5e-4) and lrs[10] == pytest.approx(1e-3)
    assert lrs[55] == pytest.approx(5e-4) and optimizer.param_groups[0]["lr"] == 0


def exported_encoder(folder, **kwargs) -> Encoder:
    return Encoder(model=AutoModel.from_pretrained(folder), tokenizer=AutoTokenizer.from_pretrained(folder), **kwargs)


def test_export_loads_with_transformers_and_writes_sentence_transformers_files(model_dir, tmp_path):
    module = AlignerModule(model=model_dir, pooling="cls", query_prefix="query: ", passage_prefix="passage: ",
                           query_max_length=128)
    module.val_results = {"val/mrr": 0.625, "val/r@1": 0.5}
    module.data_hparams = {"chains": "runs/chains/demo/chains.jsonl"}
    folder = module.export(tmp_path / "export")
    loaded = exported_encoder(folder, pooling="cls", query_prefix="query: ", passage_prefix="passage: ")
    for kind in ("query", "passage"):
        expected = module.encoder.encode(TEXTS, kind, show_progress=False)
        assert loaded.encode(TEXTS, kind, show_progress=False) == pytest.approx(expected, abs=1e-6)

    modules = json.loads((folder / "modules.json").read_text())
    assert [m["type"].rsplit(".", 1)[1] for m in modules] == ["Transformer", "Pooling", "Normalize"]
    pooling = json.loads((folder / "1_Pooling" / "config.json").read_text())
    assert pooling["word_embedding_dimension"] == 32
    assert pooling["pooling_mode_cls_token"] and not pooling["pooling_mode_mean_tokens"]
    st_config = json.loads((folder / "config_sentence_transformers.json").read_text())
    assert st_config["prompts"] == {"query": "query: ", "document": "passage: "}
    assert json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"] == 128
    card = (folder / "README.md").read_text()
    assert model_dir in card and "val/mrr | 0.6250" in card and "runs/chains/demo/chains.jsonl" in card
    assert "library_name: sentence-transformers" in card


def test_lora_trains_adapters_only_and_export_merges_them(model_dir, tmp_path):
    module = AlignerModule(model=model_dir, lora=True, lora_target_modules=["query", "value"]).eval()
    trainable = [n for n, p in module.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    with torch.no_grad():  # LoRA's B starts at zero: move it so that merging matters
        for name, param in module.named_parameters():
            if "lora_B" in name:
                param.normal_(std=0.5)
    folder = module.export(tmp_path / "lora")
    assert not list(folder.glob("adapter_*"))
    pooling = json.loads((folder / "1_Pooling" / "config.json").read_text())
    assert pooling["pooling_mode_mean_tokens"] and not pooling["pooling_mode_cls_token"]
    expected = module.encoder.encode(TEXTS, "query", show_progress=False)
    assert exported_encoder(folder).encode(TEXTS, "query", show_progress=False) == pytest.approx(expected, abs=1e-5)
    assert module.encoder.encode(TEXTS, "query", show_progress=False) == pytest.approx(expected)  # not merged in place


@pytest.mark.parametrize("offline", [True, False])
def test_push_to_hub_without_network_fails_clearly(tmp_path, monkeypatch, offline):
    (tmp_path / "model").mkdir()
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", offline)
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    with pytest.raises(RuntimeError, match="could not reach the Hugging Face hub to push .* to user/aligner: "):
        push_to_hub(tmp_path / "model", "user/aligner", token="hf_test")
