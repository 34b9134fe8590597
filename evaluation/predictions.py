"""Reading back the predictions a run appended to its `predictions.jsonl`."""

from __future__ import annotations

from pathlib import Path

from core.records import DataError, log_records
from inference.methods import Prediction


def read_predictions(path: Path) -> dict[str, Prediction]:
    """The predictions an earlier run appended (a partial last line, left by a kill, is cut off)."""
    done = {}
    for where, record in log_records(path):
        try:
            prediction = Prediction.from_dict(record)
        except (KeyError, TypeError) as error:
            raise DataError(path, where, f"not a prediction record ({error!r}); pass --overwrite true "
                                         "to start the run over") from None
        done[prediction.question_id] = prediction
    return done
