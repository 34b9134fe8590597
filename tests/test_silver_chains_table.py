"""benchmarks/silver_chains.py: its table is recomputed from the per-question records it commits."""

import json

import pytest

from benchmarks.common import RESULTS, read_rows
from benchmarks.silver_chains import RECORDS, figures, rows_of


def test_the_committed_figures_are_recomputed_from_the_committed_records():
    if not RECORDS.is_file():
        pytest.skip("no committed silver_chains records")
    committed = json.loads((RESULTS / "silver_chains.json").read_text())
    committed = {k: v for k, v in committed.items() if k not in ("machine", "seconds") and not k.startswith("note.")}
    assert figures(rows_of(read_rows(RECORDS))) == pytest.approx(committed)
