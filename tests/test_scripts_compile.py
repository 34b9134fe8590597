"""Every script and benchmark compiles. The benchmarks run for hours and no timed test runs them, so
an error the compiler finds (a name used before its `global` declaration, say) would otherwise show
only after the work that comes before it in a long session."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted([*ROOT.glob("*.py"), *(ROOT / "benchmarks").glob("*.py"), *(ROOT / "scripts").glob("*.py")])


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_compiles(path):
    compile(path.read_text(), str(path), "exec")

