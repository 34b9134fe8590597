"""`prepare.py recipe`: the steps run in order, each in its own process, and a step whose output is finished
(a full KG store, a chains file of every question with the same settings, a training run past its last
epoch) is skipped and said to be; a dry run only says what each would do. The multi-dataset recipe builds
exactly the chains files its training config reads."""

import json
import shutil
from pathlib import Path

import pytest
import torch
import yaml

import prepare
from core.cli import config_from_file
from core.config import ConfigError
from datamodules.loaders import DEMO_DIR
from training_data.chains import ChainsConfig
from training_data.recipe import RecipeConfig, run_recipe, train_step

ROOT = Path(__file__).resolve().parents[2]


def write_yaml(path: Path, value: dict) -> str:
    path.write_text(yaml.safe_dump(value))
    return str(path)


@pytest.fixture
def demo_recipe(tmp_path, monkeypatch) -> RecipeConfig:
    """The demo's KG, chains and training, with every output under `tmp_path` (the working folder)."""
    monkeypatch.chdir(tmp_path)
    for folder in ("configs/chains", "configs/kg", "configs/aligner"):
        (tmp_path / folder).mkdir(parents=True)
    kg = write_yaml(Path("configs/kg/demo.yaml"), {"data": {"format": "unified"}, "store": "runs/kg/demo"})
    chains = write_yaml(Path("configs/chains/demo.yaml"),
                        {"data": {"format": "unified"}, "kg_store": str(DEMO_DIR / "kg"),
                         "output": "runs/chains/demo/chains.jsonl", "retriever": "bm25"})
    train = write_yaml(Path("configs/aligner/demo.yaml"),
                       {"trainer": {"default_root_dir": "runs/aligner/demo", "max_epochs": 3}})
    return RecipeConfig(kg=[kg], chains=[chains], train=[train])


def outputs(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in (folder / "runs").rglob("*")) if (folder / "runs").exists() else []


def test_a_dry_run_says_what_each_step_would_do_in_order_and_changes_nothing(demo_recipe, tmp_path, capsys):
    run_recipe(demo_recipe, dry_run=True)
    assert capsys.readouterr().out.splitlines() == [
        "[1/3] python prepare.py kg --config configs/kg/demo.yaml",
        "    would run: 186 of 186 passages to extract, import or restore",
        "[2/3] python prepare.py chains --config configs/chains/demo.yaml",
        "    would run: 72 of 72 questions to write",
        "[3/3] python train.py fit --config configs/aligner/demo.yaml",
        "    would run: trains from the start",
    ]
    assert outputs(tmp_path) == []


def fake_checkpoint(path: Path, epochs_processed: int) -> None:
    """A `last.ckpt` with the one field `finished` reads: the fit loop's processed epochs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"loops": {"fit_loop": {"epoch_progress": {"current": {"processed": epochs_processed}}}}}, path)


def test_finished_steps_are_skipped_and_said_to_be(demo_recipe, tmp_path, capsys):
    shutil.copytree(DEMO_DIR / "kg", tmp_path / "runs/kg/demo")  # every demo passage's triples
    config = config_from_file(ChainsConfig, demo_recipe.chains[0])
    chains = tmp_path / config.output
    chains.parent.mkdir(parents=True)
    questions = [json.loads(line)["id"] for line in (DEMO_DIR / "questions.jsonl").read_text().splitlines()]
    chains.write_text("".join(json.dumps({"question_id": q}) + "\n" for q in questions))
    (chains.parent / "chains.run.json").write_text(json.dumps(config.settings()))
    fake_checkpoint(tmp_path / "runs/aligner/demo/checkpoints/last.ckpt", 3)
    run_recipe(demo_recipe)  # would fail if it ran a step: the configs name no model
    assert capsys.readouterr().out.splitlines()[1::2] == [
        "    skipped, done: runs/kg/demo holds all 186 passages",
        "    skipped, done: runs/chains/demo/chains.jsonl holds all 72 questions",
        "    skipped, done: runs/aligner/demo/checkpoints/last.ckpt was saved after the last epoch (3)",
    ]
    # chains of other settings are not done: the run says which settings differ
    (chains.parent / "chains.run.json").write_text(json.dumps({**config.settings(), "k0": 3}))
    run_recipe(RecipeConfig(chains=demo_recipe.chains), dry_run=True)
    assert capsys.readouterr().out.splitlines()[1] == "    would run: 72 of 72 questions to write"


def test_the_training_step_resumes_an_unfinished_run_and_later_configs_override(demo_recipe, tmp_path):
    fake_checkpoint(tmp_path / "runs/aligner/demo/checkpoints/last.ckpt", 2)
    step = train_step(demo_recipe.train)
    assert not step.done and step.command[-2:] == ["--ckpt_path", "last"]
    overlay = write_yaml(tmp_path / "overlay.yaml", {"trainer": {"max_epochs": 2}})
    assert train_step([*demo_recipe.train, overlay]).done
    moved = write_yaml(tmp_path / "moved.yaml", {"trainer": {"default_root_dir": "runs/aligner/other"}})
    step = train_step([*demo_recipe.train, moved])
    assert (step.done, step.state) == (False, "trains from the start")
    assert step.command == ["train.py", "fit", "--config", demo_recipe.train[0], "--config", moved]


def test_prepare_py_runs_a_step_in_its_own_process_then_skips_it(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)  # the recipe runs the checkout's prepare.py and train.py
    output = tmp_path / "chains.jsonl"
    chains = write_yaml(tmp_path / "chains.yaml", {"data": {"format": "unified"}, "kg_store": str(DEMO_DIR / "kg"),
                                                    "output": str(output), "retriever": "bm25"})
    recipe = write_yaml(tmp_path / "recipe.yaml", {"chains": [chains]})
    assert prepare.main(["recipe", "--config", recipe]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "    runs: 72 of 72 questions to write"
    assert len(output.read_text().splitlines()) == 72
    assert prepare.main(["recipe", "--config", recipe]) == 0
    assert capsys.readouterr().out.splitlines()[1] == f"    skipped, done: {output} holds all 72 questions"


def test_a_recipe_naming_a_missing_config_is_a_one_line_error(tmp_path):
    with pytest.raises(ConfigError, match="chains names nowhere.yaml, which is not a file"):
        RecipeConfig(chains=["nowhere.yaml"])


def test_the_multi_dataset_recipe_builds_the_chains_and_kgs_its_training_reads():
    recipe = yaml.safe_load((ROOT / "configs/recipes/multi_cpu.yaml").read_text())
    assert recipe["train"] == ["configs/aligner/multi_cpu.yaml"] and len(recipe["kg"]) == len(recipe["chains"]) == 6
    training = yaml.safe_load((ROOT / recipe["train"][0]).read_text())
    chains = [yaml.safe_load((ROOT / path).read_text()) for path in recipe["chains"]]
    assert sorted(c["output"] for c in chains) == sorted(training["data"]["init_args"]["chains"].values())
    stores = {yaml.safe_load((ROOT / path).read_text())["store"] for path in recipe["kg"]}
    assert {c["kg_store"] for c in chains} <= stores


def test_the_recipes_negatives_come_from_bm25():
    recipe = yaml.safe_load((ROOT / "configs/recipes/multi_cpu.yaml").read_text())
    assert all(config_from_file(ChainsConfig, str(ROOT / path)).retriever == "bm25" for path in recipe["chains"])


@pytest.mark.parametrize("ablation, changed", [
    ("dense_negatives", {"retriever": "dense"}),
    ("ance_negatives", {"negatives_scorer": "runs/aligner/multi/checkpoints/best.ckpt"}),  # the recipe's Aligner
])
def test_each_negatives_ablation_changes_the_negatives_only(ablation, changed):
    recipe = yaml.safe_load((ROOT / "configs/recipes/multi_cpu.yaml").read_text())
    variant = yaml.safe_load((ROOT / f"configs/recipes/ablations/{ablation}.yaml").read_text())
    assert variant["train"] == recipe["train"] + [f"configs/aligner/ablations/{ablation}.yaml"]
    training = yaml.safe_load((ROOT / recipe["train"][0]).read_text())
    trained = f"{training['trainer']['default_root_dir']}/checkpoints/best.ckpt"
    assert changed.get("negatives_scorer", trained) == trained
    overlay = yaml.safe_load((ROOT / variant["train"][1]).read_text())
    assert overlay["trainer"]["default_root_dir"] != training["trainer"]["default_root_dir"]
    defaults = {path.split("/")[-1]: yaml.safe_load((ROOT / path).read_text()) for path in recipe["chains"]}
    outputs = {}
    for path in variant["chains"]:
        config = yaml.safe_load((ROOT / path).read_text())
        default = defaults[path.split("/")[-1].replace(f"_{ablation}", "")]
        assert {k: v for k, v in config.items() if k != "output"} == {
            k: v for k, v in {**default, **changed}.items() if k != "output"}
        assert config["output"].startswith("runs/chains/ablations/")
        outputs[default["output"]] = config["output"]
    named = training["data"]["init_args"]["chains"]
    assert overlay["data"]["init_args"]["chains"] == {name: outputs[path] for name, path in named.items()}
