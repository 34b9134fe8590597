"""The layout's rules, checked: import-linter's contracts in pyproject.toml (each folder imports only
the folders below it; inference never imports training code), and no script imports another script."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["core", "datamodules", "kg", "models", "losses", "inference", "training_data", "evaluation"]
SCRIPTS = {p.stem for p in ROOT.glob("*.py")}


def lint_imports(folder: Path) -> subprocess.CompletedProcess:
    command = Path(sys.executable).with_name("lint-imports")
    if not command.exists():
        pytest.skip("import-linter is not installed (it comes with the dev extra)")
    return subprocess.run([str(command), "--no-cache"], cwd=folder, capture_output=True, text=True)


def test_the_import_contracts_are_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 kept, 0 broken" in result.stdout


def test_a_lower_layer_importing_a_higher_one_breaks_the_contract(tmp_path):
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    text = tmp_path / "core" / "text.py"
    text.write_text(text.read_text() + "\nfrom evaluation.runner import evaluate  # noqa\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "Each folder imports only the folders below it BROKEN" in result.stdout
    assert "core.text -> evaluation.runner" in result.stdout


def imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module.split(".")[0])
    return modules


@pytest.mark.parametrize("path", sorted([*ROOT.glob("*.py"), *ROOT.glob("benchmarks/*.py"),
                                         *ROOT.glob("scripts/*.py"), *(f for p in PACKAGES for f in ROOT.glob(f"{p}/**/*.py"))]),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_script_is_imported(path):
    assert not imported_modules(path) & (SCRIPTS - {path.stem}), "scripts import the library, never another script"
