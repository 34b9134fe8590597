"""Offline preparation: raw benchmark files -> unified questions and passages -> retrieval indexes.

    python prepare.py data --data.format musique --data.questions ../shared/data/musique/kag_100.json \
        --output_dir data/musique-kag
    python prepare.py index --config configs/eval/demo.yaml --retriever dense

`data` writes `questions.jsonl` and `passages.jsonl` in the unified format (read back with
`--data.format unified`). `index` builds (or finds up to date) the retrieval index of a corpus.
"""

import sys
from pathlib import Path

from datasets import Dataset
from jsonargparse import ActionConfigFile, ArgumentParser

from datamodules.loaders import DataConfig
from datamodules.records import exit_code


def write_unified(config: DataConfig, output_dir: str) -> Path:
    benchmark = config.load()
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("questions", benchmark.questions), ("passages", benchmark.passages)):
        Dataset.from_list([r.to_dict() for r in rows]).to_json(out / f"{name}.jsonl", lines=True, force_ascii=False)
    print(f"wrote {len(benchmark.questions)} questions and {len(benchmark.passages)} passages to {out}")
    return out


def build_parser() -> ArgumentParser:
    data = ArgumentParser(description="Write a benchmark as unified questions.jsonl and passages.jsonl")
    data.add_argument("--config", action=ActionConfigFile)
    data.add_class_arguments(DataConfig, "data")
    data.add_argument("--output_dir", type=str, required=True)

    from evaluate import build_parser as evaluate_parser  # index uses evaluate's config, so both agree
    index = evaluate_parser()
    index.description = "Build the retrieval index of a corpus (reused later by evaluate.py)"

    parser = ArgumentParser(prog="prepare.py", description=__doc__.split("\n")[0], exit_on_error=False)
    commands = parser.add_subcommands()
    commands.add_subcommand("data", data)
    commands.add_subcommand("index", index)
    return parser


def run(cfg) -> None:
    if cfg.subcommand == "data":
        write_unified(DataConfig(**cfg.data.data.as_dict()), cfg.data.output_dir)
    elif cfg.subcommand == "index":
        from evaluate import build_method, config_from_namespace

        config = config_from_namespace(cfg.index)
        build_method(config, config.data.load())
        print(f"index of {config.data.corpus or config.data.questions} is ready in {config.index.cache_dir}")


def main(argv: list[str] | None = None) -> int:
    cfg = build_parser().parse_args(argv)
    return exit_code(lambda: run(cfg))


if __name__ == "__main__":
    sys.exit(main())
