"""The TriggerCalibrator recovers known α, β, γ, δ and τ from traces generated with them."""

import json
import math
from dataclasses import asdict, replace
from pathlib import Path

import lightning as L
import pytest
import torch

from models.training_cli import lightning_cli
from core.records import DataError
from datamodules.trigger_traces import TriggerTraceDataModule, collate, read_traces
from models.trigger_calibrator import PARAMS, DegenerateParams, TriggerCalibrator, check
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


def random_traces(n_questions: int, seed: int, words: tuple[int, int], sentence_signals, entity_signals,
                  label) -> list[dict]:
    """Questions of 4 sentences of `words` words and 1-3 entity tokens each: signals drawn by
    `sentence_signals(n, g)` / `entity_signals(m, g)` as (H, A), 60% content words, then every item
    labelled by `label(item, kind, g)`, sentences first."""
    g = torch.Generator().manual_seed(seed)
    questions = []
    for q in range(n_questions):
        sentences, entities = [], []
        for _ in range(4):
            n = int(torch.randint(*words, (1,), generator=g))
            h, a = sentence_signals(n, g)
            c = (torch.rand(n, generator=g) < 0.6).float()
            sentences.append({"entropy": h.tolist(), "attention": a.tolist(), "content": c.tolist()})
            m = int(torch.randint(1, 4, (1,), generator=g))
            eh, ea = entity_signals(m, g)
            entities.append({"entropy": eh.tolist(), "attention": ea.tolist()})
        for kind, items in (("sentence", sentences), ("entity", entities)):
            for item in items:
                item["label"] = label(item, kind, g)
        questions.append({"question_id": f"q{q}", "sentences": sentences, "entities": entities})
    return questions


def margin(item: dict, kind: str, params: MindParams) -> float:
    if kind == "sentence":
        return rind_margin(item["entropy"], item["attention"], item["content"], params)
    return confidence_margin(item["entropy"], item["attention"], params)


def synthetic_traces(n_questions: int, seed: int = 0) -> list[dict]:
    """Random signals; labels drawn with P(1) = σ(margin / T), the margins computed by hand (above) with the
    TRUE parameters, not by the formulas under test."""
    uniform = lambda n, g: (4 * torch.rand(n, generator=g), 0.6 * torch.rand(n, generator=g))
    draw = lambda item, kind, g: int(torch.rand(1, generator=g) < sigmoid(margin(item, kind, TRUE) / T))
    return random_traces(n_questions, seed, (3, 10), uniform, uniform, draw)


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
    # MIND's hand-set values, in the formulas' units until the fit sets the data's units
    assert asdict(model.params()) == pytest.approx(asdict(MindParams(threshold=0.5, attention="raw")))
    assert model.hparams.initial == {"alpha": 1.0, "beta": 1.0, "gamma": 1.0, "delta": 0.2, "threshold": 0.5,
                                     "attention": None}
    as_in_a_checkpoint = TriggerCalibrator(initial=asdict(TRUE), attention="sentence").params()
    assert asdict(as_in_a_checkpoint) == pytest.approx(asdict(replace(TRUE, attention="sentence")))
    names = sorted(name for name, _ in model.named_parameters())
    assert names == sorted(f"raw.{name}" for name in (*PARAMS, "log_temperature"))
    with pytest.raises(ValueError, match="threshold"):
        TriggerCalibrator(MindParams())
    with pytest.raises(ValueError, match="must be positive"):
        TriggerCalibrator(MindParams(alpha=-0.7, threshold=0.5))
    with pytest.raises(ValueError, match="no entity could pass"):
        TriggerCalibrator(MindParams(gamma=0.724, delta=0.0001, threshold=0.787))
    with pytest.raises(ValueError, match="attention must be one of raw, sentence"):
        TriggerCalibrator(attention="max")


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
    assert 0 < float(metrics["val/trigger_f1"]) <= 1 and 0 < float(metrics["val/entity_f1"]) <= 1
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
                    "--trainer.default_root_dir", str(tmp_path), "--trainer.enable_progress_bar", "false"])
    assert isinstance(cli.model, TriggerCalibrator) and cli.trainer.current_epoch == 2
    assert MindParams.load(params) == cli.model.params()
    assert cli.model.hparams.initial == {"alpha": 1.0, "beta": 1.0, "gamma": 1.0, "delta": 0.2, "threshold": 0.5,
                                         "attention": None}
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["best.ckpt", "last.ckpt"]
    checkpoint = tmp_path / "checkpoints" / "last.ckpt"  # the end of training
    assert torch.load(checkpoint, weights_only=False)["global_step"] == cli.trainer.global_step
    saved = MindParams(**torch.load(checkpoint, weights_only=False)["mind_params"])  # in the formulas' units
    reloaded = TriggerCalibrator.load_from_checkpoint(checkpoint)  # with the data's units, not the initial ones
    assert float(reloaded.m_a) != 1.0 and reloaded.params() == saved and saved.attention == "raw"


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


# --- standardised signals, constraints, class weights -----------------------------------------------------


HAND = [{"question_id": "q", "sentences": [
    {"entropy": [1.0, 3.0], "attention": [0.02, 0.06], "content": [1, 1], "label": 1},
    {"entropy": [2.0, 2.0], "attention": [0.03, 0.05], "content": [1, 0], "label": 0},
    {"entropy": [0.0, 4.0], "attention": [0.0, 0.08], "content": [1, 1], "label": 0}],
    "entities": [{"entropy": [0.0, 1.0], "attention": [0.01, 0.03], "label": 1}]}]


def test_fit_start_sets_the_units_and_class_weights_from_the_training_data():
    model = TriggerCalibrator(MindParams(alpha=0.5, beta=2.0, gamma=1.0, delta=0.2, threshold=0.6), temperature=0.1,
                              balance_classes=True)
    batch = collate(HAND)
    model.standardise([batch])
    # m_H = 12/6, m_A = 0.24/6, m_E = 0.04/2; u = 1/(1+0), v = 0.03; 2 negatives for 1 positive, no negative entity
    units = {"m_h": 2.0, "m_a": 0.04, "m_e": 0.02, "u": 1.0, "v": 0.03, "pos_weight_trigger": 2.0,
             "pos_weight_entity": 1.0}
    assert {name: float(getattr(model, name)) for name in units} == pytest.approx(units)
    # α = m_A·0.5, β = m_H·2, δ = 0.2/m_E, τ = (γ·u + δ·v)·0.6/1.2, T = m_H·m_A·0.1
    learned = MindParams(alpha=0.02, beta=4.0, gamma=1.0, delta=10.0, threshold=0.65, attention="raw")
    assert asdict(model.params()) == pytest.approx(asdict(learned))
    with torch.no_grad():
        margins = (model.trigger_logits(batch) * 0.008).tolist()
    for sentence, margin in zip(HAND[0]["sentences"], margins):  # the same decision, in the formulas' units
        assert margin == pytest.approx(rind_margin(sentence["entropy"], sentence["attention"], sentence["content"],
                                                   learned), abs=1e-5)


def test_constraints_hold_whatever_the_raw_values():
    model = TriggerCalibrator()
    model.standardise([collate(HAND)])
    with torch.no_grad():
        for name in ("alpha", "beta", "gamma", "delta"):
            model.raw[name].fill_(-40.0)  # what an unconstrained fit drove below 0
        model.raw["threshold"].fill_(40.0)  # and above every confidence
    learned = model.params()
    assert min(learned.alpha, learned.beta, learned.gamma, learned.delta) >= 0
    assert learned.threshold <= learned.gamma * 1.0 + learned.delta * 0.03 < learned.gamma + learned.delta


def test_class_weights_count_the_rare_class_as_much_as_the_common_one():
    batch = collate(HAND)
    model = TriggerCalibrator(temperature=1.0, balance_classes=True)
    loss = lambda: float(model.losses(batch)[0])
    plain = loss()
    model.standardise([batch])
    model.m_h.fill_(1.0)  # keep the logits; only the weights differ
    model.m_a.fill_(1.0)
    with torch.no_grad():
        logits, labels = model.trigger_logits(batch), batch["sentence_label"]
    by_hand = -(2.0 * labels * torch.log(torch.sigmoid(logits)) + (1 - labels) * torch.log(1 - torch.sigmoid(logits)))
    assert loss() == pytest.approx(float(by_hand.mean()), rel=1e-5) and loss() != pytest.approx(plain)


def test_without_balancing_the_loss_follows_the_labels_as_they_are():
    batch = collate(HAND)
    model = TriggerCalibrator(temperature=1.0)
    model.standardise([batch])
    assert float(model.pos_weight_trigger) == 1.0 and float(model.pos_weight_entity) == 1.0
    model.m_h.fill_(1.0)
    model.m_a.fill_(1.0)
    with torch.no_grad():
        logits, labels = model.trigger_logits(batch), batch["sentence_label"]
        by_hand = -(labels * torch.log(torch.sigmoid(logits)) + (1 - labels) * torch.log(1 - torch.sigmoid(logits)))
        assert float(model.losses(batch)[0]) == pytest.approx(float(by_hand.mean()), rel=1e-5)


RAW = MindParams(alpha=0.01, beta=3.0, gamma=1.0, delta=8.0, threshold=0.7)  # at the scale of raw attention


def raw_scale_traces(n_questions: int, seed: int = 0) -> list[dict]:
    """Attention about 1/prompt length (under 0.05), mean H near 0.7, as measured: labels by the hard rules at RAW,
    about 1 sentence in 10 positive. MIND's hand-set α = β = 1 never fires there."""
    return random_traces(
        n_questions, seed, (4, 12),
        lambda n, g: (2 * torch.rand(n, generator=g) ** 2, 0.05 * torch.rand(n, generator=g) ** 2),
        lambda m, g: (3 * torch.rand(m, generator=g), 0.05 * torch.rand(m, generator=g)),
        lambda item, kind, g: int(margin(item, kind, RAW) > 0 if kind == "sentence" else margin(item, kind, RAW) >= 0))


def hard_trigger(params: MindParams, questions: list[dict]) -> tuple[float, float]:
    """(rate, F1) of MIND's own decision (`decide`) with `params` against the labels."""
    fired, labels = [], []
    for sentence in (s for q in questions for s in q["sentences"]):
        h, a, c = (torch.tensor(sentence[k]) for k in ("entropy", "attention", "content"))
        fired.append(decide(WordSignals([f"w{i}" for i in range(len(h))], [], h, a, c), params).retrieve)
        labels.append(bool(sentence["label"]))
    hits = sum(f and y for f, y in zip(fired, labels))
    return sum(fired) / len(fired), 2 * hits / (sum(fired) + sum(labels))


def test_learns_a_discriminating_trigger_at_the_scale_of_raw_attention(tmp_path):
    questions = raw_scale_traces(100)
    assert hard_trigger(MindParams(), questions)[0] == 0  # the hand-set values never fire
    data = TriggerTraceDataModule(str(write_traces(tmp_path / "traces.jsonl", questions)), val_fraction=0.25)
    model = TriggerCalibrator(temperature=T, params_path=str(tmp_path / "trigger.json"))
    trainer = L.Trainer(max_epochs=15, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, accelerator="cpu")
    trainer.fit(model, data)
    learned = MindParams.load(tmp_path / "trigger.json")
    rate, f1 = hard_trigger(learned, questions)
    positives = sum(s["label"] for q in questions for s in q["sentences"]) / (4 * len(questions))
    assert 0.05 < positives < 0.2 and 0.03 < rate < 0.3 and f1 > 0.6, (positives, rate, f1, learned)
    assert float(trainer.callback_metrics["val/trigger_auroc"]) > 0.9
    # the entity rule is learned up to a common scale of γ, δ, τ: their ratios are RAW's
    assert learned.delta / learned.gamma == pytest.approx(RAW.delta / RAW.gamma, rel=0.2)
    assert learned.threshold / learned.gamma == pytest.approx(RAW.threshold / RAW.gamma, rel=0.1)


def test_sentence_attention_is_read_when_asked_for(tmp_path):
    questions = [{"question_id": "q", "sentences": [dict(s, attention_in_sentence=[10 * x for x in s["attention"]])
                                                    for s in HAND[0]["sentences"]],
                  "entities": [dict(HAND[0]["entities"][0], attention_in_sentence=[0.5, 0.5])]}]
    read = read_traces(write_traces(tmp_path / "t.jsonl", questions))
    raw, sentence = TriggerCalibrator(temperature=1.0), TriggerCalibrator(temperature=1.0, attention="sentence")
    batch = collate(read)
    with torch.no_grad():
        assert torch.equal(raw.trigger_logits(batch), raw.trigger_logits(collate(HAND)))
        assert not torch.allclose(sentence.trigger_logits(batch), raw.trigger_logits(batch))
        # conf = max(1/(1+0) + 0.2·0.5, 1/2 + 0.2·0.5) − τ, τ = 0.5
        assert sentence.entity_logits(batch).item() == pytest.approx(1.1 - 0.5)
    assert sentence.params().attention == "sentence"
    with pytest.raises(ValueError, match="no attention_in_sentence for the sentences.*prepare.py traces"):
        sentence.trigger_logits(collate(HAND))


# --- refusing degenerate parameters ---------------------------------------------------------------------


def test_check_refuses_a_constant_trigger_and_a_threshold_no_entity_reaches():
    batches = [collate(HAND)]  # max S per sentence: 3·0.06 = 0.18, 2·0.03 = 0.06, 4·0.08 = 0.32
    assert check(MindParams(alpha=0.0, beta=4.0, threshold=0.5), batches) is None  # θ = 4·mean A = 0.16: 2 of 3
    with pytest.raises(DegenerateParams, match="the trigger fires on every one of the 3 sentences \\(1 of them "
                                               "labelled as needing retrieval"):
        check(MindParams(alpha=0.0, beta=0.0, threshold=0.5), batches)
    with pytest.raises(DegenerateParams, match="the trigger fires on none of the 3 sentences"):
        check(MindParams(), batches)  # α = β = 1 at this attention scale
    # the audit's γ and τ, with δ = 0: conf = max(γ/(1+0), γ/(1+1)) = 0.724
    with pytest.raises(DegenerateParams, match="no entity can pass: the threshold 0.787 is above the highest "
                                               "confidence on the data, 0.724"):
        check(MindParams(alpha=0.0, beta=4.0, gamma=0.724, delta=0.0, threshold=0.787), batches)
    check(MindParams(alpha=0.0, beta=4.0, gamma=0.724, delta=0.0, threshold=0.72), batches)
    check(MindParams(alpha=0.0, beta=4.0, threshold=None), batches)  # top k: no threshold to check


def test_check_accepts_an_always_firing_trigger_where_most_sentences_need_retrieval():
    mostly = [{**HAND[0], "sentences": [dict(s, label=1) for s in HAND[0]["sentences"][:2]] + HAND[0]["sentences"][2:]}]
    note = check(MindParams(alpha=0.0, beta=0.0, threshold=0.5), [collate(mostly)])
    assert note.startswith("the trigger fires on every one of the 3 sentences, as the labels ask (2 of them")
    with pytest.raises(DegenerateParams, match="fires on none"):  # never retrieving is never what MIND is for
        check(MindParams(), [collate(mostly)])


def refused_fit(tmp_path, initial: MindParams):
    """A fit that cannot move (lr 0) from `initial`, in standardised units, on 4 copies of HAND."""
    questions = [dict(HAND[0], question_id=f"q{i}") for i in range(4)]
    data = TriggerTraceDataModule(str(write_traces(tmp_path / "traces.jsonl", questions)), val_fraction=0.25)
    model = TriggerCalibrator(initial, temperature=1.0, lr=0.0, params_path=str(tmp_path / "trigger.json"))
    L.Trainer(max_epochs=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
              enable_model_summary=False, accelerator="cpu").fit(model, data)
    return model


def test_fit_end_writes_no_degenerate_params(tmp_path, caplog):
    # ᾱ, β̄ near 0: θ ≈ 0 < max S of every sentence
    model = refused_fit(tmp_path, MindParams(alpha=1e-4, beta=1e-4, threshold=0.5))
    assert model.params().alpha < 1e-4 and not (tmp_path / "trigger.json").exists()
    assert "trigger.json not written: the trigger fires on every one of the 12 sentences" in caplog.text
    caplog.clear()
    # a sound trigger (α = 0.5·m_A, β = 0.5·m_H: θ = 0.08 against max S 0.18, 0.06, 0.32), but
    # τ = 0.99·(γ·u + δ·v) = 1.287 (γ = 1, δ = 0.2/m_E = 10): u and v come from different tokens, of conf 1.1 and 0.8
    model = refused_fit(tmp_path, MindParams(alpha=0.5, beta=0.5, gamma=1.0, delta=0.2, threshold=0.99 * 1.2))
    assert not (tmp_path / "trigger.json").exists()
    assert "trigger.json not written: no entity can pass" in caplog.text
    caplog.clear()
    refused_fit(tmp_path, MindParams(alpha=0.5, beta=0.5, threshold=0.5))
    assert (tmp_path / "trigger.json").is_file() and "not written" not in caplog.text
