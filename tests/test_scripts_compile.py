"""Every script compiles, and every benchmark imports as a module of the `benchmarks` package, which is how
`python -m benchmarks.<name>` runs it, with plain imports (no sys.path edits). The benchmarks run for hours
and no timed test runs them, so an error the compiler or the import finds (a name used before its `global`
declaration, say) would otherwise show only after the work that comes before it in a long session."""

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted([*ROOT.glob("*.py"), *(ROOT / "scripts").glob("*.py")])
BENCHMARKS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if p.stem != "__init__")


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_compiles(path):
    compile(path.read_text(), str(path), "exec")


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.stem)
def test_each_benchmark_imports_as_a_module_of_the_package(path):
    assert "sys.path" not in path.read_text()
    importlib.import_module(f"benchmarks.{path.stem}")


def test_a_benchmark_runs_with_python_m_from_the_checkout():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-m", "benchmarks.retrieval_baselines", "--help"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "--limit" in done.stdout
