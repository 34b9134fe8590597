"""benchmarks/mind_eval.py says in words what each method spends and gains against fixed interval."""

from benchmarks.mind_eval import against_fixed_interval


def row(method, f1, calls, recall, diff=None, p=None, verdict=None):
    test = None if diff is None else {"difference": 100 * diff, "p (Holm)": p, "verdict": verdict}
    return {"method": method, "f1": f1, "retrieval_calls": calls, "recall@5": recall, "f1 test": test,
            "calls vs fixed interval": calls / 4.0}


def test_each_method_is_placed_against_fixed_interval_by_its_paired_test():
    rows = [row("fixed", 0.25, 4.0, 0.7), row("fewer calls, worse", 0.14, 1.0, 0.45, diff=-0.11, p=0.0004,
                                              verdict="behind"),
            row("fewer calls, same", 0.24, 2.0, 0.68, diff=-0.01, p=0.62, verdict="no significant difference")]
    triggers = [{"trigger": "calibrated", "held-out sentences": 80, "needing retrieval": 60, "AUROC": 0.5671,
                 "fires on": 0.15}]
    lines = against_fixed_interval(rows, triggers).strip().splitlines()
    assert lines[0] == "## Against fixed interval"
    assert lines[2] == ("- fewer calls, worse: 0.25× fixed interval's retrieval calls (1.00 against 4.00 a question), "
                        "at an F1 below its (14.0 against 25.0, -11.0 points, Holm-adjusted p < 0.001; recall@5 45.0 against 70.0).")
    assert "at an F1 not significantly different from its (24.0 against 25.0, -1.0 points, Holm-adjusted p = 0.62;" in lines[3]
    assert lines[4] == ("- The calibrated trigger ranks the held-out traced sentences at AUROC 0.567 (0.5 is chance); "
                        "at its threshold it fires on 15% of them, and 75% need retrieval.")
