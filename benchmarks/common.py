"""Shared by the benchmark scripts: where the shared data is, and writing a result table."""

import argparse
import gzip
import json
import platform
import shutil
import sys
from pathlib import Path

import torch

from core.records import write_atomic
from evaluation.scores import SCORES_NAME, read_scores

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
    """The CPU's model and the vector instructions torch's kernels use (a retrained checkpoint's bytes may differ
    across either), torch's threads and the GPU."""
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    cpuinfo = Path("/proc/cpuinfo")
    model = next((line.partition(":")[2].strip() for line in cpuinfo.read_text().splitlines()
                  if line.startswith("model name")), None) if cpuinfo.is_file() else None
    cpu = f"{model} ({platform.machine()})" if model else platform.processor() or platform.machine()
    kernels = torch.backends.cpu.get_cpu_capability()
    return f"{cpu}, {kernels} kernels, {torch.get_num_threads()} torch threads, {device}"


def commit_scores(name: str, runs: dict[str, str | Path]) -> None:
    """Copy each run's per-question scores and its `run.json` (run key -> evaluate.py output folder, or a
    scores file committed before, as `committed_runs` gives) to benchmarks/results/<name>/ as
    `<key>.jsonl.gz` and `<key>.run.json`, replacing what that folder held."""
    files = {}
    for key, source in runs.items():
        source, stem = Path(source), key.replace(" ", "_")
        scores, run = (source, run_record(source)) if source.is_file() else (source / SCORES_NAME, source / "run.json")
        files[f"{stem}.jsonl.gz"] = scores.read_bytes()  # all read before the folder is replaced: a source may be in it
        if run.is_file():
            files[f"{stem}.run.json"] = run.read_bytes()
    folder = RESULTS / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for file, content in files.items():
        (folder / file).write_bytes(content)


def run_record(scores: Path) -> Path:
    """The `run.json` committed beside a scores file `<key>.jsonl.gz`."""
    return scores.with_name(scores.name.removesuffix(".jsonl.gz") + ".run.json")


def committed_runs(name: str, configs: dict, questions: int, inputs: bool = True) -> dict[str, Path]:
    """The runs of `configs` (key -> EvalConfig) that benchmarks/results/<name>/ already holds, key -> scores
    file: made by the same config over today's inputs, on exactly its first `questions` questions. A
    benchmark that takes longer than one sitting commits what it finished and runs only the rest later.
    `inputs=False`: made by the same config, whatever its inputs hold today (`made_by`)."""
    from evaluation.runner import made_by  # the inference stack, which only these benchmarks need

    found, ids = {}, {}  # ids: the first `questions` of each data config, loaded once
    for key, config in configs.items():
        scores = RESULTS / name / f"{key.replace(' ', '_')}.jsonl.gz"
        if not (scores.is_file() and made_by(run_record(scores), config, inputs)):
            continue
        data = repr(config.data)
        if data not in ids:
            ids[data] = [q.id for q in config.data.load().questions[:questions]]
        if list(read_scores(scores).scores) == ids[data]:
            found[key] = scores
    return found


def stop_if_held(configs: list) -> None:
    """Stop before any of `configs` (EvalConfigs) runs when a folder of theirs holds a run of other settings
    or inputs, which resuming would refuse when its turn came, perhaps an hour into the batch."""
    from evaluation.runner import held_by_others

    if stale := held_by_others(configs):
        sys.exit(f"{', '.join(stale)}: hold{'s' * (len(stale) == 1)} runs of other settings or inputs; move them aside "
                 "(the committed scores under benchmarks/results/ keep what was reported) and run again")


def write_rows(path: Path, rows: list[dict]) -> None:
    """Per-question (or per-passage) rows as gzip JSON Lines, a table's figures recomputable from them; the
    same rows give the same bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, "".join(json.dumps(row) + "\n" for row in rows), compress=True)


def read_rows(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


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
