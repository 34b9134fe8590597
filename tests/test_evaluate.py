"""evaluate.py end to end on the demo data: config parsing, outputs, resume, errors."""

import json
import re
from pathlib import Path

import pytest
from conftest import save_tiny

from datamodules.loaders import DataConfig
from evaluate import main
from evaluation.config import EvalConfig, parse_config
from evaluation.runner import evaluate
from inference.memory import Memory
from inference.methods import SingleShotRAG
from inference.mind import MindRAG
from models.encoder import EncoderConfig
from models.uncertainty import MindParams


def run_files(out):
    metrics = json.loads((out / "metrics.json").read_text())
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    return metrics, predictions


def test_yaml_config_and_dotted_overrides(tmp_path):
    config_file = tmp_path / "c.yaml"
    config_file.write_text("data:\n  format: musique\n  limit: 3\nretriever: dense\nencoder:\n  pooling: cls\n")
    config = parse_config(["--config", str(config_file), "--data.limit", "5", "--index.type", "hnsw"])
    assert isinstance(config, EvalConfig)
    assert (config.data.format, config.data.limit, config.retriever) == ("musique", 5, "dense")
    assert (config.encoder.pooling, config.index.type) == ("cls", "hnsw")


def test_labels_and_the_aligner_settings():
    config = parse_config(["--method", "kirag", "--aligner.name", "runs/x/model", "--aligner.batch_size", "8"])
    assert config.label() == "kirag aligner-only (model, bm25)"
    assert isinstance(config.aligner, EncoderConfig) and config.aligner.cache_dir == ".cache/triple_embeddings"
    assert (config.aligner.max_length, config.aligner.query_max_length, config.aligner.batch_size) == (64, 256, 8)
    assert (config.encoder.max_length, config.encoder.query_max_length) == (256, None)  # the dense retriever's
    assert parse_config(["--method", "kirag", "--kirag.constructor", "true", "--retriever", "dense"]).label() == (
        "kirag constructor (minilm, dense)")
    assert parse_config(["--method", "mind", "--mind.params", "p.json"]).label() == (
        "mind calibrated, cot+confidence (bm25)")
    assert parse_config(["--method", "kirag+mind", "--mind.entity_filter", "none"]).label() == (
        "kirag+mind hand-set, none (bm25)")
    assert parse_config([]).label() == "rag (bm25)" and parse_config(["--name", "mine"]).label() == "mine"


def test_bm25_on_demo_writes_metrics_predictions_and_table(tmp_path):
    out = tmp_path / "run"
    assert main(["--retriever", "bm25", "--output_dir", str(out), "--index.cache_dir", str(tmp_path / "idx")]) == 0
    metrics, predictions = run_files(out)
    n = metrics["questions"]
    assert n >= 50 and len(predictions) == n
    for k in (1, 2, 3, 5, 10):
        per_question = sum(p[f"recall@{k}"] for p in predictions) / n
        assert metrics[f"recall@{k}"] == pytest.approx(per_question)
    assert metrics["recall@1"] <= metrics["recall@2"] <= metrics["recall@5"] <= metrics["recall@10"]
    assert 0 < metrics["recall@10"] <= 1
    assert all(len(p["passages"]) == 10 and len({pid for pid, _ in p["passages"]}) == 10 for p in predictions)
    assert metrics["retrieval_calls"] == 1.0
    assert "| rag (bm25) |" in (out / "metrics.md").read_text()


def test_interrupted_run_resumes_without_redoing_finished_questions(tmp_path, monkeypatch):
    args = ["--retriever", "bm25", "--batch_size", "8", "--index.cache_dir", str(tmp_path / "idx")]
    full = tmp_path / "full"
    assert main(args + ["--output_dir", str(full)]) == 0
    expected, _ = run_files(full)

    # Cut the run short: keep 20 finished records and half of the next line.
    part = tmp_path / "part"
    part.mkdir()
    lines = (full / "predictions.jsonl").read_text().splitlines()
    (part / "run.json").write_text((full / "run.json").read_text())
    (part / "predictions.jsonl").write_text("\n".join(lines[:20]) + "\n" + lines[20][:25])

    asked = []
    predict = SingleShotRAG.predict
    monkeypatch.setattr(SingleShotRAG, "predict", lambda self, qs: asked.extend(qs) or predict(self, qs))
    assert main(args + ["--output_dir", str(part)]) == 0
    resumed, predictions = run_files(part)
    assert len(asked) == len(lines) - 20
    assert len(predictions) == len(lines)
    timing = "seconds_per_question"
    assert {k: v for k, v in resumed.items() if k != timing} == {k: v for k, v in expected.items() if k != timing}


def test_a_run_in_blocks_ends_as_one_run(tmp_path):
    config = parse_config(["--retriever", "bm25", "--index.cache_dir", str(tmp_path / "idx"),
                           "--output_dir", str(tmp_path / "whole")])
    expected = evaluate(config)
    config.output_dir = str(tmp_path / "blocks")
    block = evaluate(config, until=7)
    out = Path(config.output_dir)
    assert len((out / "predictions.jsonl").read_text().splitlines()) == 7
    assert block["questions"] == json.loads((out / "metrics.json").read_text())["questions"] == 7
    first_7 = parse_config(["--retriever", "bm25", "--index.cache_dir", str(tmp_path / "idx"), "--data.limit", "7",
                            "--output_dir", str(tmp_path / "first_7")])
    timing = "seconds_per_question"
    assert {k: v for k, v in block.items() if k != timing} == {k: v for k, v in evaluate(first_7).items() if k != timing}
    assert evaluate(config, until=7)["questions"] == 7  # nothing left to do in that block, and nothing done past it
    assert len((out / "predictions.jsonl").read_text().splitlines()) == 7
    metrics = evaluate(config, until=1000)
    assert {k: v for k, v in metrics.items() if k != timing} == {k: v for k, v in expected.items() if k != timing}
    config.overwrite = True
    with pytest.raises(ValueError, match="overwrite"):
        evaluate(config, until=7)


def test_other_config_in_same_output_dir_is_refused_not_overwritten(tmp_path, capsys):
    out = str(tmp_path / "run")
    common = ["--output_dir", out, "--index.cache_dir", str(tmp_path / "idx"), "--data.limit", "4"]
    assert main(common + ["--retriever", "bm25"]) == 0
    before = (tmp_path / "run" / "predictions.jsonl").read_text()
    assert main(common + ["--retriever", "bm25", "--top_k", "3"]) == 2
    assert "different config" in capsys.readouterr().err
    assert (tmp_path / "run" / "predictions.jsonl").read_text() == before


def test_a_run_saved_before_a_setting_existed_still_resumes(tmp_path):
    out = tmp_path / "run"
    args = ["--output_dir", str(out), "--index.cache_dir", str(tmp_path / "idx"), "--data.limit", "4"]
    assert main(args) == 0
    run = json.loads((out / "run.json").read_text())
    del run["config"]["mind"], run["config"]["data"]["offset"]  # as written before these settings existed
    (out / "run.json").write_text(json.dumps(run))
    assert main(args) == 0
    assert main(args + ["--data.offset", "1"]) == 2  # a non-default value is a different config


def test_unknown_retriever_and_bad_data_exit_with_a_message(tmp_path, capsys):
    assert main(["--retriever", "tfidf", "--output_dir", str(tmp_path / "a")]) == 2
    assert "tfidf" in capsys.readouterr().err
    assert main(["--data.questions", str(tmp_path / "missing.json"), "--output_dir", str(tmp_path / "b")]) == 2
    assert "missing.json: file does not exist" in capsys.readouterr().err


def test_dense_with_a_local_model_folder(tmp_path, make_tiny_encoder):
    folder = tmp_path / "tiny"
    tiny = make_tiny_encoder()
    tiny.model.save_pretrained(folder)
    tiny.tokenizer.save_pretrained(folder)
    out = tmp_path / "run"
    assert main(["--retriever", "dense", "--encoder.name", str(folder), "--data.limit", "6",
                 "--output_dir", str(out), "--index.cache_dir", str(tmp_path / "idx")]) == 0
    metrics, predictions = run_files(out)
    assert metrics["questions"] == 6 and all(len(p["passages"]) == 10 for p in predictions)


def test_kirag_with_constructor_and_reader(tmp_path, kirag_args, make_tiny_lm):
    lm = make_tiny_lm()
    out = tmp_path / "run"
    assert main(kirag_args + ["--kirag.constructor", "true", "--reader.enabled", "true", "--reader.max_new_tokens", "4",
                              "--lm.name", save_tiny(lm.model, lm.tokenizer, tmp_path / "lm"),
                              "--output_dir", str(out)]) == 0
    metrics, predictions = run_files(out)
    assert metrics["questions"] == 3 and {"em", "f1"} <= set(metrics)
    for p in predictions:
        assert len(p["passages"]) == 10 and isinstance(p["answer"], str) and "em" in p
        assert 1 <= p["retrieval_calls"] <= 2 and p["llm_calls"] == p["retrieval_calls"] + 1  # steps + the reader
        assert len(p["trace"]) == p["retrieval_calls"] and len(p["chain"]) <= 2
    assert "| kirag constructor (aligner, bm25) |" in (out / "metrics.md").read_text()


def test_rag_rerank_reranks_kirags_budget_of_one_query_by_the_aligner(tmp_path, kirag_args):
    rag, rerank = tmp_path / "rag", tmp_path / "rerank"
    common = ["--data.limit", "3", "--index.cache_dir", str(tmp_path / "idx")]
    assert main(common + ["--top_k", "10", "--output_dir", str(rag)]) == 0  # k0 · max_steps = 5 · 2 passages
    assert main(kirag_args + ["--method", "rag+rerank", "--kirag.k0", "5", "--output_dir", str(rerank)]) == 0
    (rag_metrics, rag_predictions), (metrics, predictions) = run_files(rag), run_files(rerank)
    assert metrics["retrieval_calls"] == 1 and metrics["passages_retrieved"] == 10 and metrics["llm_calls"] == 0
    assert metrics["recall@retrieved"] == rag_metrics["recall@10"]  # the same pool, in another order
    for mine, single in zip(predictions, rag_predictions):
        assert {pid for pid, _ in mine["passages"]} == {pid for pid, _ in single["passages"]}
        assert len(mine["trace"]) == 1 and len(mine["trace"][0]["candidates"]) > 0
        scored = [score for _, score in mine["passages"][: len({c[1] for c in mine["trace"][0]["candidates"]})]]
        assert scored == sorted(scored, reverse=True)  # passages with triples first, by their best triple


def test_a_changed_aligner_at_the_same_path_is_refused_not_resumed(tmp_path, kirag_args, make_tiny_encoder, capsys):
    out = tmp_path / "run"
    args = kirag_args + ["--output_dir", str(out)]
    assert main(args) == 0
    before = (out / "predictions.jsonl").read_text()
    assert main(args) == 0  # the same files: the finished run is read back
    assert (out / "predictions.jsonl").read_text() == before
    folder = Path(kirag_args[kirag_args.index("--aligner.name") + 1])
    retrained = make_tiny_encoder(seed=1)
    save_tiny(retrained.model, retrained.tokenizer, folder)  # "retrained" into the same folder
    assert main(args) == 2
    assert "other contents of aligner.name" in capsys.readouterr().err
    assert (out / "predictions.jsonl").read_text() == before
    assert main(args + ["--overwrite", "true"]) == 0


TRIPLE = re.compile(r"^<[^;<>]+; [^;<>]+; [^;<>]+>$")


@pytest.mark.parametrize("method", ["fixed_interval", "dragin", "mind", "kirag+mind"])
def test_mind_methods_end_to_end_with_a_tiny_lm(method, tmp_path, kirag_args, make_tiny_lm, monkeypatch):
    lm = make_tiny_lm()
    out = tmp_path / "run"
    # θ = 0 for every trigger that has one: DRAGIN's fixed θ, and MIND's α = β = 0, so that any sentence
    # with a content word of positive H·A must retrieve.
    params = MindParams(alpha=0.0, beta=0.0).save(tmp_path / "trigger.json")
    args = kirag_args + ["--method", method, "--lm.name", save_tiny(lm.model, lm.tokenizer, tmp_path / "lm"),
                         "--mind.max_sentences", "2", "--mind.fixed_threshold", "0.0", "--mind.params", str(params),
                         "--output_dir", str(out)]
    batches, predict = [], MindRAG.predict
    monkeypatch.setattr(MindRAG, "predict", lambda self, qs: batches.append(len(qs)) or predict(self, qs))
    facts, add = [], Memory.add
    monkeypatch.setattr(Memory, "add", lambda self, fact: facts.append(fact) or add(self, fact))
    assert main(args) == 0
    assert batches == [1, 1, 1]  # one question at a time, each saved as it is done
    metrics, predictions = run_files(out)
    assert metrics["questions"] == 3 and {"em", "f1"} <= set(metrics)
    passages = DataConfig().load().passage_by_id()
    for p in predictions:
        sentences = [step for step in p["trace"] if not step.get("forced_answer")]
        assert isinstance(p["answer"], str) and len(sentences) <= 2 and len(p["trace"]) - len(sentences) <= 1
        retrieved = [step for step in p["trace"] if step["retrieve"]]
        # every search counts: a kirag+mind retrieval runs KiRAG's loop, 1 to max_steps = 2 searches
        searches = [step["searches"] for step in retrieved]
        assert p["retrieval_calls"] == sum(searches)
        assert all(1 <= n <= 2 if method == "kirag+mind" else n == 1 for n in searches), searches
        assert len({pid for pid, _ in p["passages"]}) == len(p["passages"]) <= 10
        for step in sentences:
            if method == "fixed_interval":  # every sentence with a word retrieves
                assert step["retrieve"] == bool(re.search(r"\S", step["sentence"])), step
            elif step["word"] is None:  # no word at all (the generation ended): nothing to decide on
                assert not step["retrieve"] and not step["sentence"].strip(), step
            else:  # θ = 0: retrieval exactly when some content word has H·A > 0
                assert step["threshold"] == 0.0 and step["retrieve"] == (step["max_score"] > 0), step
        for step in retrieved:  # a retrieval found passages, kept in the prediction, and regenerated the sentence
            assert step["retrieved"] and "regenerated" in step
            assert set(step["retrieved"]) <= {pid for pid, _ in p["passages"]}
        assert bool(p["passages"]) == bool(retrieved)
    # the random LM writes a sentence with content words for one question at least: the trigger fired there
    assert sum(p["retrieval_calls"] for p in predictions) >= 1 and facts
    searches = [step["searches"] for p in predictions for step in p["trace"] if step["retrieve"]]
    assert max(searches) == (2 if method == "kirag+mind" else 1)  # the Aligner-only loop runs its L = 2 steps
    if method == "kirag+mind":  # KiRAG decides what: the facts kept in memory are its chain's triples
        assert all(TRIPLE.match(f.text) and f.source == "kirag" for f in facts), facts
    else:  # the passages themselves, as "title: text"
        assert all(f.text == f"{passages[f.source].title}: {passages[f.source].text}" for f in facts), facts


def test_compare_puts_runs_side_by_side(tmp_path, kirag_args):
    rag, kirag, out = tmp_path / "rag", tmp_path / "kirag", tmp_path / "cmp"
    assert main(["--data.limit", "3", "--output_dir", str(rag), "--index.cache_dir", str(tmp_path / "idx")]) == 0
    assert main(kirag_args + ["--output_dir", str(kirag), "--name", "mine"]) == 0
    assert main(["compare", str(rag), str(kirag), "--output_dir", str(out)]) == 0
    rows = json.loads((out / "comparison.json").read_text())
    assert [r["method"] for r in rows] == ["rag (bm25)", "mine"]
    assert rows[1]["recall@5"] == run_files(kirag)[0]["recall@5"]
    assert rows[1]["recall@5_diff"] == pytest.approx(rows[1]["recall@5"] - rows[0]["recall@5"])  # paired, same questions
    assert 0 <= rows[1]["recall@5_p"] <= 1 and "recall@5_p" not in rows[0]
    assert rows[0]["recall@5_low"] <= rows[0]["recall@5"] <= rows[0]["recall@5_high"]
    assert rows[1]["passages_retrieved"] >= 10 == rows[0]["passages_retrieved"]  # the loop saw more than it returns
    assert rows[1]["recall@retrieved"] >= rows[1]["recall@10"] and rows[0]["recall@retrieved"] == rows[0]["recall@10"]
    table = (out / "comparison.md").read_text()
    assert "| rag (bm25) | 3 |" in table and "| mine | 3 |" in table
    assert (out / "recall_at_k.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_kirag_errors_name_the_missing_file(tmp_path, kirag_args, capsys):
    assert main(kirag_args + ["--aligner.name", str(tmp_path / "nope.ckpt"), "--output_dir", str(tmp_path / "a")]) == 2
    assert "nope.ckpt" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "never-ran"), "--output_dir", str(tmp_path / "c")]) == 2
    assert "never-ran" in capsys.readouterr().err


SHARED_CONFIGS = sorted(
    p.name for p in (Path(__file__).parents[1] / "configs" / "eval").glob("*.yaml") if not p.stem.startswith("demo")
)


@pytest.mark.integration
@pytest.mark.parametrize("name", SHARED_CONFIGS)
def test_bm25_on_every_shared_dataset_config(name, shared_data, tmp_path, monkeypatch):
    monkeypatch.chdir(Path(__file__).parents[1])  # the configs name ../shared/data relative to the repository
    out = tmp_path / "run"
    assert main(["--config", f"configs/eval/{name}", "--output_dir", str(out),
                 "--index.cache_dir", str(tmp_path / "idx")]) == 0
    metrics, predictions = run_files(out)
    assert len(predictions) == metrics["questions"] >= 10
    assert 0.2 < metrics["recall@10"] <= 1.0
