"""Tables from per-question scores: the significance family, what compare pairs, and scores files."""

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.report import compare, significance
from evaluation.scores import ScoredRun, read_scores, write_scores
from evaluation.stats import holm, sign_flip_p

ROOT = Path(__file__).resolve().parents[2]


def run(method: str, recall: list[float], corpus: str = "c0", first: int = 0) -> ScoredRun:
    return ScoredRun(method, corpus, {f"q{first + i}": {"recall@5": r, "em": None} for i, r in enumerate(recall)},
                     source=method)


def test_a_family_is_adjusted_by_holm_and_verdicts_read_the_adjusted_p():
    base = run("rag", [0.0] * 12)
    strong, weak = run("strong", [1.0] * 12), run("weak", [1.0] * 5 + [0.0] * 7)
    rows = significance([(strong, base, "recall@5"), (weak, base, "recall@5"), (weak, base, "em")])
    assert [r["method"] for r in rows] == ["strong", "weak"]  # em could not be computed: not in the family
    raw = [sign_flip_p([1.0] * 12)[0], sign_flip_p([1.0] * 5)[0]]
    assert [r["p"] for r in rows] == pytest.approx(raw)
    assert [r["p (Holm)"] for r in rows] == pytest.approx(holm(raw))
    assert rows[0]["verdict"] == "ahead" and rows[1]["verdict"] == "no significant difference"  # 2/32 = 0.0625
    assert rows[0]["difference"] == 100.0 and rows[0]["questions"] == 12


def test_scores_files_round_trip_and_bad_ones_are_named(tmp_path):
    original = run("rag", [0.5, 1.0])
    write_scores(original, tmp_path / "s.jsonl.gz")
    again = read_scores(tmp_path / "s.jsonl.gz")
    assert (again.method, again.corpus, again.scores) == (original.method, original.corpus, original.scores)
    (tmp_path / "bad.jsonl.gz").write_bytes(gzip.compress(b'{"method": "m", "corpus": "c"}\n'))
    with pytest.raises(ValueError, match=r"bad.jsonl.gz: line 1: not a score record \(missing question_id\)"):
        read_scores(tmp_path / "bad.jsonl.gz")
    mixed = [{"method": "a", "question_id": "q1", "corpus": "c"}, {"method": "b", "question_id": "q2", "corpus": "c"}]
    (tmp_path / "mixed.jsonl.gz").write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in mixed).encode()))
    with pytest.raises(ValueError, match="line 2: a record of another run"):
        read_scores(tmp_path / "mixed.jsonl.gz")


def test_compare_refuses_runs_over_another_corpus_or_with_no_shared_question(tmp_path):
    for name, scored in {"a": run("a", [1.0, 0.0]), "b": run("b", [1.0, 1.0], corpus="c1"),
                         "c": run("c", [1.0], first=5)}.items():
        write_scores(scored, tmp_path / f"{name}.jsonl.gz")
    with pytest.raises(ValueError, match="another corpus"):
        compare([str(tmp_path / "a.jsonl.gz"), str(tmp_path / "b.jsonl.gz")], str(tmp_path / "out"))
    with pytest.raises(ValueError, match="shares no question"):
        compare([str(tmp_path / "a.jsonl.gz"), str(tmp_path / "c.jsonl.gz")], str(tmp_path / "out"))
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError, match="is a file, not a folder"):
        compare([str(tmp_path / "a.jsonl.gz")], str(tmp_path / "file"))


def test_compare_says_how_many_questions_it_paired(tmp_path):
    write_scores(run("all four", [1.0, 0.0, 1.0, 0.0]), tmp_path / "a.jsonl.gz")
    write_scores(run("first three", [1.0, 1.0, 1.0]), tmp_path / "b.jsonl.gz")
    compare([str(tmp_path / "a.jsonl.gz"), str(tmp_path / "b.jsonl.gz")], str(tmp_path / "out"))
    text = (tmp_path / "out" / "comparison.md").read_text()
    assert "their paired tests use the 3 both scored" in text
    paired = json.loads((tmp_path / "out" / "comparison.json").read_text())["paired"]
    assert [(p["metric"], p["questions"]) for p in paired] == [("recall@5", 3)]


def test_each_column_of_a_table_keeps_one_number_format():
    from evaluation.report import markdown_table
    table = markdown_table([{"s": 2.03, "n": 136.0, "recall@5": 0.5}, {"s": 0.00346, "n": 0.5, "recall@5": None}],
                           ["s", "n", "recall@5"])
    assert table.splitlines()[2:] == ["| 2.03 | 136 | 50.0 |", "| 0.00 | 0 | – |"]


def test_importing_the_report_leaves_matplotlibs_backend_as_the_caller_set_it():
    """The figures are drawn on a bare `Figure` (here and in benchmarks), so a user's backend survives the import."""
    check = ("import matplotlib; matplotlib.use('svg'); import evaluation.report; "
             "print(matplotlib.get_backend())")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "svg"
