"""KiRAG's ranking weights chosen offline, from finished runs (inference/kirag_ranking.py).

KiRAG's chain does not depend on how its passages are ranked, and each prediction keeps every retrieved
passage's ranking components, so a run's passages can be ranked again for any weights without running
the loop, exactly as a run with those weights would rank them. Sweep validation runs made with
`kirag.ranking.score_text true` (without it only the triple and retrieval weights can be swept), choose
the weights, then run the test questions once with them:

    from evaluation.ranking_sweep import sweep
    from inference.kirag_ranking import RankingConfig
    grid = [RankingConfig(1.0, r, x) for r in (0, 0.25, 0.5, 1) for x in (0, 0.25, 0.5, 1)]
    rows = sweep(["runs/bench/.../validation/musique/kirag_text"], grid, k=5)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from evaluation.config import EvalConfig, read_run_config
from evaluation.metrics import recall_at_k
from evaluation.predictions import read_predictions
from inference.kirag_ranking import RankingConfig, rerank_predictions
from inference.methods import Prediction


def _kirag_run(run_dir: str | Path) -> tuple[EvalConfig, list[Prediction]]:
    """A finished KiRAG run's config and predictions; another method's run is refused."""
    run_dir = Path(run_dir)
    config = read_run_config(run_dir / "run.json")
    if config.method != "kirag":
        raise ValueError(f"{run_dir} is a run of method {config.method}, not kirag")
    return config, list(read_predictions(run_dir / "predictions.jsonl").values())


def rerank_run(run_dir: str | Path, ranking: RankingConfig, k: int | None = None) -> dict[str, list[tuple[str, float]]]:
    """A finished KiRAG run's predictions ranked again by `ranking`: question id -> its top `k` passages
    with their scores (`k` default: the run's `top_k`)."""
    config, predictions = _kirag_run(run_dir)
    return rerank_predictions(predictions, ranking, k or config.top_k)


def sweep(run_dirs: Sequence[str | Path], rankings: Sequence[RankingConfig], k: int = 5) -> list[dict[str, float]]:
    """For each ranking, in order: its weights, its recall@k over the questions of all `run_dirs` together
    (each question counts once, whatever its run's size), and under "questions" each question's (id, recall@k).
    Each run is read once, whatever the number of rankings."""
    runs = []
    for run_dir in run_dirs:
        config, predictions = _kirag_run(run_dir)
        runs.append(({q.id: q.gold_passage_ids for q in config.data.load().questions}, predictions))
    rows = []
    for ranking in rankings:
        recalls = [(qid, recall_at_k([pid for pid, _ in ranked], gold[qid], k))
                   for gold, predictions in runs for qid, ranked in rerank_predictions(predictions, ranking, k).items()]
        rows.append({"triple_weight": ranking.triple_weight, "retrieval_weight": ranking.retrieval_weight,
                     "text_weight": ranking.text_weight,
                     f"recall@{k}": sum(r for _, r in recalls) / max(len(recalls), 1), "questions": recalls})
    return rows
