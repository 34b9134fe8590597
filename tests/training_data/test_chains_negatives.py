"""The chains' negatives settings: BM25 by default (that of the Aligner the validation choices were made for), chains of other settings (dense ones)
refused rather than reused, and a second round mined with a trained Aligner's checkpoint."""

import json

import lightning
import numpy as np
import pytest
import torch

from core.chains import read_chains
from core.config import ConfigError
from datamodules.loaders import DEMO_DIR, DataConfig
from inference.embedding_index import TripleIndex
from models.aligner import AlignerModule, checkpoint_encoder
from models.encoder import EncoderConfig
from prepare import main
from training_data.chains import ChainsConfig, build_chains_file
from training_data.negatives import chain_queries, equivalent
from training_data.recipe import chains_step


def save_checkpoint(path, model_dir, seed=0):
    """A checkpoint as `train.py` writes one, enough for `AlignerModule.from_checkpoint`: a tiny random Aligner."""
    torch.manual_seed(seed)
    module = AlignerModule(EncoderConfig(name=model_dir, max_length=64, query_max_length=256))
    with torch.no_grad():
        for param in module.parameters():
            param.add_(torch.randn_like(param) * 0.1)
    torch.save({"state_dict": module.state_dict(), "hyper_parameters": dict(module.hparams),
                "pytorch-lightning_version": lightning.__version__}, path)
    return str(path)


def demo_chains(folder, **kwargs) -> ChainsConfig:
    """The chains of 3 demo questions over the demo's KG, written to `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    return ChainsConfig(data=DataConfig(limit=3), kg_store=str(DEMO_DIR / "kg"), output=str(folder / "chains.jsonl"),
                        index_cache_dir=None, **kwargs)


def test_negatives_come_from_bm25_by_default():
    assert ChainsConfig().retriever == "bm25"
    # a config without a scorer keeps the settings of before, so the records of chains built then still match
    assert "negatives_scorer" not in ChainsConfig().settings()


def test_dense_chains_are_refused_not_reused_under_the_bm25_default(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    output = tmp_path / "chains.jsonl"
    config = tmp_path / "chains.yaml"
    config.write_text(json.dumps({"data": {"format": "unified", "limit": 3}, "kg_store": str(DEMO_DIR / "kg"),
                                  "output": str(output), "index_cache_dir": None}))
    assert main(["chains", "--config", str(config), "--retriever", "dense", "--report", "false"]) == 0
    built = output.read_bytes()
    capsys.readouterr()
    assert main(["chains", "--config", str(config), "--report", "false"]) == 2  # the default: bm25
    assert "made with other settings (retriever differ" in capsys.readouterr().err
    assert output.read_bytes() == built
    step = chains_step(str(config))  # the recipe runs it (and so stops there) rather than skip it as done
    assert not step.done and step.state == "3 of 3 questions to write"


def test_a_second_round_keeps_the_trained_aligners_hardest_negatives(tmp_path, tiny_model_dir):
    checkpoint = save_checkpoint(tmp_path / "best.ckpt", tiny_model_dir)
    hard = demo_chains(tmp_path / "hard", retriever="bm25", max_negatives=5, negatives_scorer=checkpoint,
                       embedding_cache_dir=str(tmp_path / "emb"))
    sampled = demo_chains(tmp_path / "sampled", retriever="bm25", max_negatives=5)
    for config in (hard, sampled):
        assert build_chains_file(config)["written"] == 3
    settings = json.loads((tmp_path / "hard" / "chains.run.json").read_text())
    assert settings["negatives_scorer"] == checkpoint and len(settings["negatives_scorer_digest"]) == 16
    scorer = TripleIndex(checkpoint_encoder(checkpoint))
    differ = 0
    for record, other in zip(read_chains(hard.output), read_chains(sampled.output), strict=True):
        queries = scorer.encoder.encode(chain_queries(record.question, record.chain), "query", show_progress=False)
        for hop, query, other_hop in zip(record.negatives, queries, other.negatives, strict=True):
            assert len(hop) == 5 and not any(equivalent(t, c) for t in hop for c in record.chain)
            scores = scorer.vectors(list(hop)) @ query
            assert np.all(np.diff(scores) <= 1e-6), scores  # the Aligner's best first
            differ += hop != other_hop
    assert differ > 0  # not the uniform sample


def test_chains_mined_with_a_retrained_checkpoint_at_the_same_path_are_refused(tmp_path, tiny_model_dir):
    checkpoint = save_checkpoint(tmp_path / "best.ckpt", tiny_model_dir)
    config = demo_chains(tmp_path / "hard", retriever="bm25", negatives_scorer=checkpoint, embedding_cache_dir=None)
    build_chains_file(config)
    save_checkpoint(tmp_path / "best.ckpt", tiny_model_dir, seed=1)
    with pytest.raises(ValueError, match=r"made with other settings \(negatives_scorer_digest differ"):
        build_chains_file(config)


@pytest.mark.parametrize("scorer, message", [("runs/aligner/model", "must be a train.py checkpoint"),
                                             ("nowhere/best.ckpt", "names nowhere/best.ckpt, which is not a file")])
def test_a_scorer_that_is_no_checkpoint_is_refused(scorer, message):
    with pytest.raises(ConfigError, match=f"negatives_scorer {message}"):
        ChainsConfig(negatives_scorer=scorer)
