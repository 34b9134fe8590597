"""Shared by the benchmark scripts: where the shared data is, and writing a result table."""

import argparse
import json
import platform
import shutil
import sys
from pathlib import Path

import torch

from evaluation.scores import SCORES_NAME

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results"


def trained_datamodule(checkpoint: Path):
    """The AlignerDataModule a checkpoint was trained with, set up again from the data settings saved in
    it (relative paths taken from the project root): the same split, so the same `test_ids` per dataset."""
    from datamodules.aligner_datamodule import AlignerDataModule

    saved = torch.load(checkpoint, map_location="cpu", weights_only=False, mmap=True)
    settings = {k: v for k, v in saved["data_hparams"].items() if not k.startswith("_")}  # LightningCLI adds `_class_path`

    def rooted(paths: str | dict[str, str]) -> str | dict[str, str]:
        return {n: str(ROOT / p) for n, p in paths.items()} if isinstance(paths, dict) else str(ROOT / paths)

    for key in ("chains", "val_chains"):
        if settings.get(key) is not None:
            settings[key] = rooted(settings[key])
    data = AlignerDataModule(**settings)
    data.setup("fit")
    data.load_state_dict(saved.get(AlignerDataModule.__qualname__, {}))  # refuses chains files changed since
    return data


def machine() -> str:
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    return f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads, {device}"


def commit_scores(name: str, runs: dict[str, str]) -> None:
    """Copy each run's per-question scores (run key -> evaluate.py output folder) to
    benchmarks/results/<name>/<key>.jsonl.gz, replacing what that folder held."""
    folder = RESULTS / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for key, output_dir in runs.items():
        shutil.copyfile(Path(output_dir) / SCORES_NAME, folder / f"{key.replace(' ', '_')}.jsonl.gz")


def write_results(name: str, markdown: str, flat: dict) -> None:
    """Write `<name>.md` and `<name>.json` (the same figures, flat keys) under benchmarks/results/."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.md").write_text(markdown)
    (RESULTS / f"{name}.json").write_text(json.dumps(flat, indent=2, sort_keys=True) + "\n")
    print(markdown)
    print(f"wrote {RESULTS / name}.md and .json")


def parse_args(parser: argparse.ArgumentParser) -> argparse.Namespace:
    """Add `--threads`, parse, set torch's threads, and stop with a reason when the shared data is absent."""
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's own)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if not SHARED_DATA.is_dir():
        sys.exit(f"{SHARED_DATA} is absent: the benchmark needs the shared data")
    return args
