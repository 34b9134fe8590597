"""The TriggerCalibrator recovers known α, β, γ, δ and τ from traces generated with them."""

import json
import math
from dataclasses import asdict
from pathlib import Path

import lightning as L
import pytest
import torch

from core.cli import lightning_cli
from core.records import DataError
from datamodules.trigger_traces import TriggerTraceDataModule, collate, read_traces
from models.trigger_calibrator import PARAMS, TriggerCalibrator
from models.uncertainty import MindParams, WordSignals, decide, token_confidence

TRUE = MindParams(alpha=0.4, beta=1.5, gamma=1.0, delta=0.6, threshold=0.5)
T = 0.1


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


def rind_margin(h: list[float], a: list[float], c: list[float], params: MindParams) -> float:
    """max S − θ in plain Python, written here rather than taken from the code under test:
    S = H·A·s per word, θ = α·mean(H) + β·mean(A)."""
    score = max(hi * ai * ci for hi, ai, ci in zip(h, a, c))
    return score - (params.alpha * sum(h) / len(h) + params.beta * sum(a) / len(a))


def confidence_margin(h: list[float], a: list[float], params: MindParams) -> float:
    """conf − threshold in plain Python: conf = max over tokens of γ/(1+H) + δ·A."""
    return max(params.gamma / (1 + hi) + params.delta * ai for hi, ai in zip(h, a)) - params.threshold


def synthetic_traces(n_questions: int, seed: int = 0) -> list[dict]:
    """Random signals; labels drawn with P(1) = σ(margin / T), the margins computed by hand (above) with the
    TRUE parameters, not by the formulas under test."""
    g = torch.Generator().manual_seed(seed)
    questions = []
    for q in range(n_questions):
        sentences, entities = [], []
        for _ in range(4):
            n = int(torch.randint(3, 10, (1,), generator=g))
            h, a = 4 * torch.rand(n, generator=g), 0.6 * torch.rand(n, generator=g)
            c = (torch.rand(n, generator=g) < 0.6).float()
            sentences.append({"entropy": h.tolist(), "attention": a.tolist(), "content": c.tolist()})
            m = int(torch.randint(1, 4, (1,), generator=g))
            entities.append({"entropy": (4 * torch.rand(m, generator=g)).tolist(),
                             "attention": (0.6 * torch.rand(m, generator=g)).tolist()})
        for item in sentences:
            p = sigmoid(rind_margin(item["entropy"], item["attention"], item["content"], TRUE) / T)
            item["label"] = int(torch.rand(1, generator=g) < p)
        for item in entities:
            p = sigmoid(confidence_margin(item["entropy"], item["attention"], TRUE) / T)
            item["label"] = int(torch.rand(1, generator=g) < p)
        questions.append({"question_id": f"q{q}", "sentences": sentences, "entities": entities})
    return questions


def write_traces(path, questions):
    path.write_text("".join(json.dumps(q) + "\n" for q in questions))
    return path


def test_logits_by_hand():
    batch = collate([{"sentences": [{"entropy": [1.0, 3.0], "attention": [0.2, 0.5], "content": [1.0, 0.0], "label": 1}],
                      "entities": [{"entropy": [0.0, 1.0], "attention": [0.1, 0.5], "label": 0}]}])
    model = TriggerCalibrator(MindParams(alpha=0.5, beta=1.0, gamma=1.0, delta=0.2, threshold=0.5), temperature=0.1)
    # max S = 0.2 (the second word is a stopword); θ = 0.5·2 + 1·0.35
    assert model.trigger_logits(batch).item() == pytest.approx((0.2 - 1.35) / 0.1)
    # conf = max(1 + 0.2·0.1, 0.5 + 0.2·0.5) = 1.02
    assert model.entity_logits(batch).item() == pytest.approx(5.2)


def test_initial_params_and_their_errors():
    model = TriggerCalibrator()
    assert PARAMS == ("alpha", "beta", "gamma", "delta", "threshold")
    assert asdict(model.params()) == pytest.approx(asdict(MindParams(threshold=0.5)))  # MIND's hand-set values
    assert model.hparams.initial == {"alpha": 1.0, "beta": 1.0, "gamma": 1.0, "delta": 0.2, "threshold": 0.5}
    assert asdict(TriggerCalibrator(initial=asdict(TRUE)).params()) == pytest.approx(asdict(TRUE))  # as in a checkpoint
    assert [name for name, _ in model.named_parameters()] == list(PARAMS)
    with pytest.raises(ValueError, match="threshold"):
        TriggerCalibrator(MindParams())


def test_recovers_known_parameters_from_synthetic_traces():
    batch = collate(synthetic_traces(1500))
    model = TriggerCalibrator(MindParams(alpha=1.0, beta=0.2, gamma=0.5, delta=0.1, threshold=0.2), temperature=T)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(600):
        optimizer.zero_grad()
        trigger, entity, _ = model.losses(batch)
        (trigger + entity).backward()
        optimizer.step()
    learned = model.params()
    for name, tolerance in (("alpha", 0.05), ("beta", 0.3), ("gamma", 0.1), ("delta", 0.15), ("threshold", 0.1)):
        assert getattr(learned, name) == pytest.approx(getattr(TRUE, name), abs=tolerance), (name, learned)


def test_cost_lowers_the_trigger_rate():
    batch = collate(synthetic_traces(200))
    rates = []
    for cost in (0.0, 2.0):
        torch.manual_seed(0)
        model = TriggerCalibrator(temperature=T, cost=cost)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
        for _ in range(200):
            optimizer.zero_grad()
            sum(model.losses(batch)[:2]).backward()
            optimizer.step()
        rates.append(float(model.losses(batch)[2].mean()))
    assert rates[1] < rates[0]


def test_fit_with_lightning_logs_auroc_and_writes_the_params(tmp_path):
    traces = write_traces(tmp_path / "traces.jsonl", synthetic_traces(60))
    data = TriggerTraceDataModule(str(traces), val_fraction=0.25, batch_size=8)
    model = TriggerCalibrator(temperature=T, params_path=str(tmp_path / "trigger.json"))
    trainer = L.Trainer(max_epochs=3, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, accelerator="cpu")
    trainer.fit(model, data)
    assert {q["question_id"] for q in data.train_questions}.isdisjoint(q["question_id"] for q in data.val_questions)
    assert len(data.val_questions) == 15
    metrics = trainer.callback_metrics
    assert 0.5 < float(metrics["val/trigger_auroc"]) <= 1 and 0.5 < float(metrics["val/entity_auroc"]) <= 1
    assert 0 <= float(metrics["val/trigger_rate"]) <= 1
    assert MindParams.load(tmp_path / "trigger.json") == model.params()
    assert json.loads((tmp_path / "trigger.json").read_text()) == pytest.approx(asdict(model.params()))


def test_one_label_class_warns_and_logs_no_auroc(tmp_path, caplog):
    questions = synthetic_traces(20)
    for q in questions:
        for s in q["sentences"]:
            s["label"] = 1  # e.g. every closed-book answer wrong
    data = TriggerTraceDataModule(str(write_traces(tmp_path / "traces.jsonl", questions)), batch_size=8)
    trainer = L.Trainer(max_epochs=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, accelerator="cpu")
    trainer.fit(TriggerCalibrator(temperature=T), data)
    assert "every training label of the sentences is 1" in caplog.text and "entities" not in caplog.text
    metrics = trainer.callback_metrics
    assert "val/trigger_auroc" not in metrics and float(metrics["val/trigger_label_rate"]) == 1.0
    assert 0 < float(metrics["val/entity_label_rate"]) < 1 and "val/entity_auroc" in metrics


def test_train_py_fits_the_trigger_config(tmp_path):
    root = Path(__file__).resolve().parents[2]
    traces = write_traces(tmp_path / "traces.jsonl", synthetic_traces(40))
    params = tmp_path / "trigger.json"
    cli = lightning_cli(["fit", "--config", str(root / "configs" / "trigger" / "demo.yaml"), "--data.traces", str(traces),
                    "--model.params_path", str(params), "--trainer.max_epochs", "2", "--trainer.logger", "false",
                    "--trainer.default_root_dir", str(tmp_path), "--trainer.callbacks.dirpath", str(tmp_path / "ckpt"),
                    "--trainer.enable_progress_bar", "false"])
    assert isinstance(cli.model, TriggerCalibrator) and cli.trainer.current_epoch == 2
    assert MindParams.load(params) == cli.model.params()
    assert cli.model.hparams.initial == {"alpha": 1.0, "beta": 1.0, "gamma": 1.0, "delta": 0.2, "threshold": 0.5}
    assert (tmp_path / "ckpt" / "last.ckpt").is_file()


def test_bad_traces_name_the_line_and_field(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"question_id": "q", "sentences": [{"entropy": [1], "attention": [1, 2], "content": [1], '
                    '"label": 1}], "entities": []}\n')
    with pytest.raises(DataError, match="sentences\\[0\\].*one value per word"):
        read_traces(path)
    path.write_text('{"question_id": "q", "sentences": [], "entities": [{"entropy": [1], "attention": [1], "label": 2}]}\n')
    with pytest.raises(DataError, match="'label' should be 0 or 1"):
        read_traces(path)


def test_relaxed_and_hard_decisions_agree_with_the_hand_written_margins():
    """On the synthetic signals: the calibrator's logits, MIND's hard trigger (`decide`) and entity rule
    (conf ≥ threshold) all take the sign of the margins written out by hand above."""
    questions = synthetic_traces(50, seed=1)
    batch = collate(questions)
    model = TriggerCalibrator(TRUE, temperature=T)
    with torch.no_grad():
        relaxed_trigger, relaxed_keep = model.trigger_logits(batch).tolist(), model.entity_logits(batch).tolist()
    sentences = [s for q in questions for s in q["sentences"]]
    entities = [e for q in questions for e in q["entities"]]
    assert len(relaxed_trigger) == len(sentences) == 200 and len(relaxed_keep) == len(entities) == 200
    fired = kept = 0
    for sentence, logit in zip(sentences, relaxed_trigger):
        h, a, c = sentence["entropy"], sentence["attention"], sentence["content"]
        margin = rind_margin(h, a, c, TRUE)
        assert logit == pytest.approx(margin / T, abs=1e-4)
        words = WordSignals([f"w{i}" for i in range(len(h))], [(i, i + 1) for i in range(len(h))],
                            torch.tensor(h), torch.tensor(a), torch.tensor(c))
        hard = decide(words, TRUE).retrieve
        if abs(margin) > 1e-5:  # away from a tie that float32 rounding could settle either way
            assert hard == (margin > 0) == (logit > 0), (sentence, margin, logit)
        fired += hard
    for entity, logit in zip(entities, relaxed_keep):
        h, a = entity["entropy"], entity["attention"]
        margin = confidence_margin(h, a, TRUE)
        assert logit == pytest.approx(margin / T, abs=1e-4)
        hard = token_confidence(torch.tensor(h), torch.tensor(a), TRUE) >= TRUE.threshold
        if abs(margin) > 1e-5:
            assert hard == (margin > 0) == (logit > 0), (entity, margin, logit)
        kept += hard
    assert 20 < fired < 180 and 20 < kept < 180  # both outcomes occur: the check covers both signs
