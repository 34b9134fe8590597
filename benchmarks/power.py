"""What the paired tests can find with the test questions we have: for each comparison an open Done-when
line rests on, the smallest true difference its test finds 4 times in 5, and the questions a 5-point
difference would need. It reads the committed per-question scores only (nothing is run):

    python -m benchmarks.power [--effect 5] [--power 0.8] [--simulations 200]

- KiRAG (`kirag_eval.md`): trained Aligner-only KiRAG against each budget-matched baseline, R@5, in each
  test part; Holm over the five.
- MIND (`mind_eval.md`): calibrated MIND against random triggering at its rate, mean of the seeds per
  question, F1 and R@5; Holm over the table's comparisons.

The level is alpha / the family's size, at which Holm finds a difference whatever the family's other
comparisons say (`evaluation.stats.detectable_difference`: the normal approximation to the sign-flip test,
the spread of the observed differences kept). The approximation is checked by simulation with the exact test
of the tables (`sign_flip_p`): questions drawn with replacement from the observed differences, tilted
exponentially until their mean is the detectable difference (the same kinds of differences, the favourable
ones more often; the ties stay ties), and the share of draws it finds is reported beside the target power.
"""

import argparse
import json

import numpy as np
from scipy.optimize import brentq

from benchmarks.common import RESULTS, write_results
from benchmarks.kirag_eval import BUDGET_BASELINES
from benchmarks.mind_eval import seed_mean
from evaluation.report import markdown_table, paired_scores
from evaluation.scores import ScoredRun, read_scores
from evaluation.stats import ALPHA, detectable_difference, power_at, questions_needed, sign_flip_p

KIRAG_PARTS = {"hotpotqa": "HotpotQA train-100", "hotpotqa_ircot_full": "HotpotQA dev, 4,858 passages",
               "musique": "MuSiQue, gpt-3.5 triples", "musique_own": "MuSiQue, our triples",
               "musique_kag": "MuSiQue kag_100, our triples"}
SHOWN = {"rag at budget": "rag at budget", "hybrid": "hybrid", "mdr": "MDR-style", "ircot": "IRCoT",
         "rerank": "rag+rerank"}  # kirag_eval's BUDGET_BASELINES as the README's table names them


def differences(run: ScoredRun, against: ScoredRun, metric: str) -> np.ndarray:
    """Per-question differences run - against on `metric`, paired as the tables' tests pair them."""
    theirs, ours = paired_scores(run, against, metric)
    return np.array(ours, dtype=float) - np.array(theirs, dtype=float)


def kirag_comparisons() -> list[dict]:
    rows = []
    for part, label in KIRAG_PARTS.items():
        folder = RESULTS / "kirag_eval" / part
        trained = read_scores(folder / "kirag_trained.jsonl.gz")
        for key in BUDGET_BASELINES:  # the primary family of kirag_eval.md
            against = read_scores(folder / f"{key.replace(' ', '_')}.jsonl.gz")
            rows.append({"table": "kirag_eval", "part": label, "comparison": f"KiRAG against {SHOWN[key]}",
                         "metric": "recall@5", "family": len(BUDGET_BASELINES),
                         "differences": differences(trained, against, "recall@5")})
    return rows


def mind_comparisons() -> list[dict]:
    folder = RESULTS / "mind_eval"
    family = len({k.split(".")[1] for k in json.loads((RESULTS / "mind_eval.json").read_text())
                  if k.startswith("paired.")})
    calibrated = read_scores(folder / "mind_calibrated.jsonl.gz")
    seeds = [read_scores(path) for path in sorted(folder.glob("random_seed*.jsonl.gz"))]
    random = seed_mean(seeds, "random triggering")
    return [{"table": "mind_eval", "part": "HotpotQA ircot_dev_500, first 100",
             "comparison": f"calibrated MIND against random, mean of {len(seeds)} seeds", "metric": metric,
             "family": family, "differences": differences(calibrated, random, metric)} for metric in ("f1", "recall@5")]


def tilted(d: np.ndarray, mean: float) -> np.ndarray | None:
    """Weights on the questions, exponentially tilted so that their weighted mean difference is `mean`;
    None when no weighting reaches it (it lies outside the observed differences)."""
    if not d.min() < mean < d.max():
        return None

    def weights(lam: float) -> np.ndarray:
        w = np.exp(lam * (d - d.max()) if lam > 0 else lam * (d - d.min()))
        return w / w.sum()

    lam = brentq(lambda lam: weights(lam) @ d - mean, -500, 500)
    return weights(lam)


def simulated_power(d: np.ndarray, mean: float, level: float, simulations: int, seed: int = 0) -> float | None:
    """The share of `simulations` draws (len(d) questions from the tilted differences) that the sign-flip
    test finds at `level`; None where no tilt reaches `mean`."""
    w = tilted(d, mean)
    if w is None:
        return None
    rng = np.random.default_rng(seed)
    found = sum(sign_flip_p(rng.choice(d, size=len(d), p=w), seed=i)[0] < level for i in range(simulations))
    return found / simulations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--effect", type=float, default=5.0, help="the difference to plan for, in points")
    parser.add_argument("--power", type=float, default=0.8)
    parser.add_argument("--simulations", type=int, default=200, help="draws of the simulated check")
    args = parser.parse_args()
    effect, flat = args.effect, {"effect": args.effect, "power": args.power, "simulations": args.simulations,
                                 "alpha": ALPHA}
    tables: dict[str, list[dict]] = {}
    for i, c in enumerate(kirag_comparisons() + mind_comparisons()):
        d, family = c["differences"], c["family"]
        detectable = detectable_difference(d, family, args.power)
        figures = {"questions": len(d), "difference": 100 * d.mean(), "spread": 100 * d.std(ddof=1),
                   "detectable": 100 * detectable,
                   "simulated_power": simulated_power(d, detectable, ALPHA / family, args.simulations),
                   "power_at_effect": power_at(d, effect / 100, family),
                   "questions_needed": questions_needed(d, effect / 100, family, args.power)}
        described = {k: c[k] for k in ("table", "part", "comparison", "metric", "family")}
        flat.update({f"{i}.{k}": v for k, v in {**described, **figures}.items()})
        simulated = figures["simulated_power"]
        tables.setdefault(c["table"], []).append({
            "questions set": c["part"], "comparison": c["comparison"], "metric": c["metric"],
            "questions": str(len(d)), "difference": f"{figures['difference']:+.1f}",
            "spread (sd)": f"{figures['spread']:.1f}", "level": f"{ALPHA}/{family}",
            "detectable": f"{figures['detectable']:.1f}",
            "simulated power there": "" if simulated is None else f"{simulated:.2f}",
            f"power at {effect:g} points": f"{figures['power_at_effect']:.2f}",
            f"questions for {effect:g} points": str(figures["questions_needed"])})
        print(tables[c["table"]][-1], flush=True)
    text = (f"# What the paired tests can find\n\n"
            "Read from the committed per-question test scores (nothing run). Differences and spreads in points, "
            "per question. *Detectable*: the smallest true mean difference that the two-sided paired test on "
            f"these questions finds with probability {args.power} at the level shown, alpha over the Holm family's "
            "size, where Holm finds it whatever the family's other comparisons say; the normal approximation to the "
            "sign-flip test, the spread kept as observed (`evaluation.stats.detectable_difference`). *Simulated "
            f"power there*: the exact test of the tables on {args.simulations} draws of as many questions from the "
            "observed differences, tilted until their mean is the detectable difference (ties stay ties; blank "
            f"where no tilt reaches it), against the target {args.power}. *Power at {effect:g} points*: how often "
            f"the test finds a true {effect:g}-point difference on these questions; *questions for {effect:g} "
            f"points*: how many it needs to find one with probability {args.power}.\n"
            + "".join(f"\n## {name}.md\n\n" + markdown_table(rows, list(rows[0])) for name, rows in tables.items()))
    write_results("power", text, flat)


if __name__ == "__main__":
    main()
