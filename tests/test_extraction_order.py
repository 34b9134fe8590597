"""benchmarks/extraction_order.py extracts with a KG config's settings, so its grouped triples can seed that KG."""

from pathlib import Path

import pytest
import yaml

from benchmarks import extraction_order
from benchmarks.common import ROOT
from models.lm.config import LMConfig


def test_the_config_paths_are_taken_from_the_project_root_and_its_settings_kept(monkeypatch):
    monkeypatch.setattr(LMConfig, "resolved_backend", lambda self: "llama_cpp")  # as where llama.cpp is installed
    config = extraction_order.load_kg_config(extraction_order.KG_CONFIG)
    assert config.store == str(ROOT / "runs" / "kg" / "hotpotqa_ircot_dev_100")
    assert Path(config.data.questions) == (ROOT / "../shared/data/hotpotqa/ircot_dev_500.jsonl")
    assert (config.num_demos, config.batch_size, config.max_new_tokens, config.data.limit) == (2, 8, 256, 100)


@pytest.mark.parametrize("settings", [{"lm": {"backend": "transformers"}}, {"openie": "triples.json"}],
                         ids=["transformers", "openie import"])
def test_a_config_that_does_not_extract_on_llama_cpp_is_refused(tmp_path, settings):
    path = tmp_path / "kg.yaml"
    path.write_text(yaml.safe_dump({"store": "runs/kg/x", **settings}))
    with pytest.raises(SystemExit, match="llama.cpp"):
        extraction_order.load_kg_config(path)
