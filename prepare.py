"""Offline preparation: raw files -> unified data -> indexes -> knowledge triples -> training data.

    python prepare.py data --data.format musique --data.questions ../shared/data/musique/kag_100.json \
        --output_dir data/musique-kag
    python prepare.py index --config configs/eval/demo.yaml --retriever dense
    python prepare.py kg --config configs/kg/demo.yaml
    python prepare.py chains --config configs/chains/demo.yaml
    python prepare.py traces --config configs/trigger/traces_demo.yaml
    python prepare.py recipe --config configs/recipes/multi_cpu.yaml [--dry_run true]

`data` writes `questions.jsonl` and `passages.jsonl` in the unified format (read back with
`--data.format unified`). `index` builds (or finds up to date) the retrieval index of a corpus,
with `evaluate.py`'s settings. `kg` extracts the corpus's knowledge triples with an LM, or imports
external ones (`openie`), into a resumable store (`kg/`). `chains` builds the Aligner's training
file: silver reasoning chains with candidate negatives (`training_data/chains.py`). `traces` runs
the LM closed-book on training questions and writes the labelled signals that calibrate MIND's
trigger and entity filter (`training_data/traces.py`). Each command resumes where it stopped.
`recipe` runs a list of `kg` and `chains` configs and a training config (`train.py fit`) in order,
skipping the steps whose output is finished (`training_data/recipe.py`).
"""

import json
import sys

from jsonargparse import ActionConfigFile, ArgumentParser, Namespace

from core.cli import argument_parser, config_parser, exit_code
from core.config import dataclass_from
from datamodules.loaders import DataConfig, convert_to_unified
from evaluation.config import EvalConfig
from evaluation.config import build_parser as evaluation_parser
from evaluation.factory import build_retriever
from kg.build import KGConfig, build_kg
from training_data.chain_quality import chain_report
from training_data.chains import ChainsConfig, build_chains_file
from training_data.recipe import RecipeConfig, run_recipe
from training_data.traces import TracesConfig, build_traces


def build_parser() -> ArgumentParser:
    data = argument_parser(description="Write a benchmark as unified questions.jsonl and passages.jsonl")
    data.add_argument("--config", action=ActionConfigFile)
    data.add_class_arguments(DataConfig, "data")
    data.add_argument("--output_dir", type=str, required=True)
    data.add_argument("--overwrite", type=bool, default=False, help="replace a folder written with other settings")

    index = evaluation_parser()  # the index is the one evaluate.py will look for
    index.description = "Build the retrieval index of a corpus (reused later by evaluate.py)"

    kg = config_parser(KGConfig, description="Extract (or import) the corpus's knowledge triples into a KG store")

    chains = config_parser(ChainsConfig,
                           description="Build silver reasoning chains with candidate negatives (chains.jsonl)")
    chains.add_argument("--report", type=bool, default=True, help="print coverage and ground-truth agreement")

    traces = config_parser(TracesConfig,
                           description="Closed-book LM traces with labels, to calibrate MIND's trigger and filter")

    recipe = config_parser(RecipeConfig, description="Run KG, chains and training steps in order, skipping finished ones")
    recipe.add_argument("--dry_run", type=bool, default=False, help="only say what each step would do")

    parser = argument_parser(prog="prepare.py", description=__doc__.split("\n")[0], exit_on_error=False)
    commands = parser.add_subcommands()
    for name, subparser in (("data", data), ("index", index), ("kg", kg), ("chains", chains), ("traces", traces),
                            ("recipe", recipe)):
        commands.add_subcommand(name, subparser)
    return parser


def run(cfg: Namespace) -> None:
    if cfg.subcommand == "data":
        benchmark = convert_to_unified(dataclass_from(DataConfig, cfg.data.data), cfg.data.output_dir,
                                       cfg.data.overwrite)
        print(f"wrote {len(benchmark.questions)} questions and {len(benchmark.passages)} passages to "
              f"{cfg.data.output_dir}")
    elif cfg.subcommand == "index":
        config = dataclass_from(EvalConfig, cfg.index)
        build_retriever(config, config.data.load())
        print(f"index of {config.data.corpus or config.data.questions} is ready in {config.index.cache_dir}")
    elif cfg.subcommand == "kg":
        print(json.dumps(build_kg(dataclass_from(KGConfig, cfg.kg)), indent=2))
    elif cfg.subcommand == "chains":
        config = dataclass_from(ChainsConfig, cfg.chains)
        print(json.dumps(build_chains_file(config), indent=2))
        if cfg.chains.report:
            print(json.dumps(chain_report(config), indent=2))
    elif cfg.subcommand == "traces":
        print(json.dumps(build_traces(dataclass_from(TracesConfig, cfg.traces)), indent=2))
    elif cfg.subcommand == "recipe":
        run_recipe(dataclass_from(RecipeConfig, cfg.recipe), cfg.recipe.dry_run)


def main(argv: list[str] | None = None) -> int:
    return exit_code(lambda: run(build_parser().parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
