"""Shared by the benchmark scripts: where the shared data is, and writing a result table."""

import argparse
import json
import platform
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results"


def machine() -> str:
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    return f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads, {device}"


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
