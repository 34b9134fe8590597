"""Export a trained Aligner: a folder that `transformers.AutoModel` and sentence-transformers both load,
with a model card (from `templates/aligner_card.md`), and its upload to the Hugging Face hub."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from string import Template
from typing import Any

import torch
import transformers
from huggingface_hub import HfApi, ModelCard, ModelCardData
from huggingface_hub.errors import HfHubHTTPError, HFValidationError
from peft import PeftModel

from models.aligner import AlignerModule
from models.encoder import Encoder
from models.packaged import PACKAGED_MINILM, PACKAGED_MINILM_HUB_ID

CARD_TEMPLATE = Path(__file__).parent / "templates" / "aligner_card.md"


def export_aligner(module: AlignerModule, folder: str | Path) -> Path:
    """Write the Aligner's encoder, tokenizer, sentence-transformers config and model card to `folder`.

    LoRA adapters are merged into the weights. sentence-transformers prompts `query` and
    `document` hold the query and passage prefixes.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model = module.encoder.model
    if isinstance(model, PeftModel):
        model = copy.deepcopy(model).merge_and_unload()
    model.save_pretrained(folder)
    module.encoder.tokenizer.save_pretrained(folder)
    _write_sentence_transformers_config(folder, module.encoder)
    model_card(module.hparams, module.data_hparams, module.val_results).save(folder / "README.md")
    return folder


def _write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n")


def _write_sentence_transformers_config(folder: Path, encoder: Encoder) -> None:
    config = encoder.config
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    if config.normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
    _write_json(folder / "modules.json", modules)
    # One length for both kinds: the query's, the longer. Triples were trained at their own, shorter one.
    _write_json(folder / "sentence_bert_config.json", {"max_seq_length": encoder.max_lengths["query"],
                                                       "do_lower_case": False})
    modes = ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens", "lasttoken")
    pooling = {"cls": "cls_token", "mean": "mean_tokens"}[config.pooling]
    _write_json(folder / "1_Pooling" / "config.json", {
        "word_embedding_dimension": encoder.dim,
        **{f"pooling_mode_{mode}": mode == pooling for mode in modes},
        "include_prompt": True,  # the Encoder pools over the prefix tokens too
    })
    _write_json(folder / "config_sentence_transformers.json", {
        "model_type": "SentenceTransformer",
        "__version__": {"transformers": transformers.__version__, "pytorch": torch.__version__},
        "prompts": {"query": config.query_prefix, "document": config.passage_prefix},
        "default_prompt_name": None,
        "similarity_fn_name": "cosine",
    })


def _flat(values: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested settings as dotted keys (`encoder.name`)."""
    flat = {}
    for key, value in values.items():
        if isinstance(value, dict):
            flat |= _flat(value, f"{prefix}{key}.")
        elif not key.startswith("_"):
            flat[prefix + key] = value
    return flat


def _chains(data: dict[str, Any]) -> str:
    """The training chains as the card names them: a file, or `name: file` for each of several datasets,
    those only tested on (`test_fraction` 1) named apart."""
    chains, fractions = data.get("chains", "unknown"), data.get("test_fraction")
    if not isinstance(chains, dict):
        return f"`{chains}`"
    tested = [n for n in chains if isinstance(fractions, dict) and fractions.get(n) == 1]
    named = lambda names: ", ".join(f"{n}: {chains[n]}" for n in names)  # noqa: E731
    text = f"`{named([n for n in chains if n not in tested])}`"
    return text + (f" (held out as test sets only, never trained on: `{named(tested)}`)" if tested else "")


def model_card(hparams: Any, data: dict[str, Any], metrics: dict[str, float]) -> ModelCard:
    """The card: what the Aligner is, its base model, training data, validation figures and settings."""
    encoder = hparams["encoder"]
    base = PACKAGED_MINILM_HUB_ID if encoder["name"].lower() in PACKAGED_MINILM else encoder["name"]
    card_data = ModelCardData(
        base_model=None if os.path.exists(os.path.expanduser(base)) else base,
        library_name="sentence-transformers",
        pipeline_tag="sentence-similarity",
        tags=["sentence-transformers", "feature-extraction", "multi-hop-retrieval", "kirag-aligner"],
    )
    query, passage = encoder["query_prefix"], encoder["passage_prefix"]
    prefixes = (f"Queries take the prefix {json.dumps(query)} (sentence-transformers prompt `query`), triples "
                f"{json.dumps(passage)} (prompt `document`)." if query or passage else "Queries and triples take no prefix.")
    settings = _flat({**dict(hparams), **data})
    body = Template(CARD_TEMPLATE.read_text()).substitute(
        base=base,
        prefixes=prefixes,
        chains=_chains(data),
        results="\n".join(f"| {k} | {v:.4f} |" for k, v in metrics.items()) or "| (none recorded) | |",
        settings="\n".join(f"| {k} | {json.dumps(v)} |" for k, v in settings.items()),
    )
    return ModelCard(f"---\n{card_data.to_yaml()}\n---\n\n{body}")


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
