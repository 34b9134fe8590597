"""Exporting a trained Aligner (a transformers / sentence-transformers folder with a model card, LoRA
merged) and pushing it to the hub."""

import json

import huggingface_hub.constants
import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from core.records import DataError
from models.aligner import AlignerModule
from models.encoder import Encoder, EncoderConfig
from models.export import export_aligner, model_card, push_to_hub

TEXTS = ["who was born in the city", "<river; flows through; city>", "<band; released; album>"]


def aligner(model_dir: str, lora: bool = False, **encoder) -> AlignerModule:
    config = EncoderConfig(name=model_dir, **{"max_length": 64, "query_max_length": 256, **encoder})
    return AlignerModule(config, lora=lora, lora_target_modules=["query", "value"] if lora else None)


def exported_encoder(folder, **kwargs) -> Encoder:
    return Encoder(EncoderConfig(**kwargs), model=AutoModel.from_pretrained(folder),
                   tokenizer=AutoTokenizer.from_pretrained(folder))


def test_export_loads_with_transformers_and_writes_sentence_transformers_files(tiny_model_dir, tmp_path):
    module = aligner(tiny_model_dir, pooling="cls", query_prefix="query: ", passage_prefix="passage: ",
                     query_max_length=128)
    module.val_results = {"val/mrr": 0.625, "val/r@1": 0.5}
    module.data_hparams = {"chains": "runs/chains/demo/chains.jsonl"}
    folder = export_aligner(module, tmp_path / "export")
    assert folder == tmp_path / "export"
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
    assert tiny_model_dir in card and "val/mrr | 0.6250" in card and "runs/chains/demo/chains.jsonl" in card
    assert "library_name: sentence-transformers" in card
    # the encoder settings appear as dotted keys, beside the module's and the datamodule's
    assert '| encoder.pooling | "cls" |' in card and '| encoder.max_length | 64 |' in card
    assert '| encoder.query_prefix | "query: " |' in card and '| lr | 2e-05 |' in card
    assert '| chains | "runs/chains/demo/chains.jsonl" |' in card


def test_model_card_names_the_hub_model_of_the_packaged_minilm():
    hparams = {"encoder": {"name": "minilm", "query_prefix": "", "passage_prefix": ""}, "lr": 1e-4}
    card = str(model_card(hparams, {}, {}))
    assert "base_model: sentence-transformers/all-MiniLM-L6-v2" in card
    assert "fine-tuned from sentence-transformers/all-MiniLM-L6-v2" in card
    assert "Queries and triples take no prefix." in card and "| (none recorded) | |" in card
    assert "Training data: silver reasoning chains `unknown`" in card
    data = {"chains": {"a": "runs/chains/a.jsonl", "b": "runs/chains/b.jsonl", "c": "runs/chains/c.jsonl"},
            "test_fraction": {"a": 0.5, "b": 1.0, "c": 0.0}}
    assert ("Training data: silver reasoning chains `a: runs/chains/a.jsonl, c: runs/chains/c.jsonl` (held out "
            "as test sets only, never trained on: `b: runs/chains/b.jsonl`)") in str(model_card(hparams, data, {}))


def test_lora_trains_adapters_only_and_export_merges_them(tiny_model_dir, tmp_path):
    module = aligner(tiny_model_dir, lora=True).eval()
    trainable = [n for n, p in module.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    with torch.no_grad():  # LoRA's B starts at zero: move it so that merging matters
        for name, param in module.named_parameters():
            if "lora_B" in name:
                param.normal_(std=0.5)
    folder = export_aligner(module, tmp_path / "lora")
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


def saved_weights(folder) -> dict[str, torch.Tensor]:
    """Exactly the tensors written to the folder (AutoModel would fill missing ones and drop extra ones)."""
    from safetensors.torch import load_file

    files = sorted(folder.glob("*.safetensors"))
    assert files, list(folder.iterdir())
    return {k: v for f in files for k, v in load_file(f).items()}


@pytest.mark.parametrize("lora", [False, True])
def test_export_writes_exactly_the_encoder_weights(tiny_model_dir, tmp_path, lora):
    import copy

    module = aligner(tiny_model_dir, lora=lora).eval()
    with torch.no_grad():  # LayerNorm weights start at 1 and biases at 0, as a reload would make them: move them
        for name, param in module.named_parameters():
            if "LayerNorm" in name or "lora_B" in name:
                param.add_(torch.randn_like(param) * 0.5)
    model = module.encoder.model
    expected = (copy.deepcopy(model).merge_and_unload() if lora else model).state_dict()
    assert not any("lora_" in k or "base_layer" in k for k in expected)
    saved = saved_weights(export_aligner(module, tmp_path / "export"))
    assert set(saved) == set(expected)
    assert all(torch.equal(saved[k], expected[k].cpu()) for k in expected)
    reloaded = AutoModel.from_pretrained(tmp_path / "export").state_dict()  # transformers' own view agrees
    assert set(expected) <= set(reloaded) and all(torch.equal(reloaded[k], expected[k]) for k in expected)


def test_a_missing_truncated_or_folder_checkpoint_is_refused_naming_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="Aligner checkpoint '.*best.ckpt' does not exist"):
        AlignerModule.from_checkpoint(tmp_path / "best.ckpt")
    (tmp_path / "model").mkdir()
    with pytest.raises(IsADirectoryError, match="Aligner checkpoint '.*model' is a folder, not a checkpoint file"):
        AlignerModule.from_checkpoint(tmp_path / "model")
    (tmp_path / "best.ckpt").write_bytes(b"PK\x03\x04 cut short")
    with pytest.raises(DataError, match=r"best\.ckpt: not a checkpoint that train\.py wrote, or a truncated one"):
        AlignerModule.from_checkpoint(tmp_path / "best.ckpt")
