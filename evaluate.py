"""Evaluate a retrieval method on a benchmark: ranked passages, R@k, EM/F1, calls and latency.

    python evaluate.py --config configs/eval/demo.yaml --retriever bm25 --output_dir runs/demo-bm25
    python evaluate.py --config configs/eval/demo_kirag.yaml --kirag.constructor true --output_dir runs/demo-kirag-llm
    python evaluate.py compare runs/demo-bm25 runs/demo-kirag-llm --output_dir runs/demo-compare

Configs are YAML read by jsonargparse (as LightningCLI reads them); any key can be overridden
with a dotted flag such as `--data.format musique`; `--help` lists them all. Predictions are
appended as they are made, so an interrupted run resumes where it stopped when started again with
the same config. `compare` puts finished runs side by side: a markdown table and a plot of
recall@k against k. The code is in `evaluation/`.
"""

import sys

from jsonargparse import ArgumentParser

from core.cli import exit_code
from core.records import check_output
from evaluation.config import parse_config
from evaluation.report import compare
from evaluation.runner import evaluate


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["compare"]:
        parser = ArgumentParser(prog="evaluate.py compare", description=compare.__doc__, exit_on_error=False)
        parser.add_argument("runs", type=str, nargs="+", help="output folders of finished runs")
        parser.add_argument("--output_dir", type=str, required=True)
        args = parser.parse_args(argv[1:])
        return exit_code(lambda: compare(args.runs, str(check_output(args.output_dir, is_folder=True))))
    return exit_code(lambda: evaluate(parse_config(argv)))


if __name__ == "__main__":
    sys.exit(main())
