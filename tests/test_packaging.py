"""The project's packaging builds without a warning (what `make install` prints), and the wheel holds the
library's data files: the demo dataset, the triple-extraction demos and the model card template."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from test_layering import PACKAGES

ROOT = Path(__file__).resolve().parents[1]
BUILD = ("import setuptools.build_meta as b, sys; wheels = b.build_wheel(sys.argv[1]), b.build_editable(sys.argv[1]); "
         "print('built', *wheels)")  # the PEP 517 hooks pip calls


def test_the_wheel_and_the_editable_install_build_without_warnings_and_with_the_data_files(tmp_path):
    pytest.importorskip("setuptools", minversion="77", reason="pyproject.toml's build-system needs setuptools>=77")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tmp_path)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-W", "error", "-c", BUILD, str(tmp_path / "dist")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    wheel, editable = done.stdout.splitlines()[-1].split()[1:]
    names = set(zipfile.ZipFile(tmp_path / "dist" / wheel).namelist())
    assert {"datamodules/demo/passages.jsonl", "datamodules/demo/questions.jsonl", "datamodules/demo/kg/triples.jsonl",
            "kg/triple_demos.json", "models/templates/aligner_card.md", "core/cli.py"} <= names
    assert not any("__pycache__" in name or name.endswith(".yaml") for name in names)
    assert "editable" in editable
