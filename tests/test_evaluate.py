"""evaluate.py end to end on the demo data: config parsing, outputs, resume, errors."""

import json
import re
from pathlib import Path

import pytest
from conftest import save_tiny

from datamodules.loaders import DataConfig
from evaluate import main
from evaluation.config import EvalConfig, parse_config
from evaluation.ranking_sweep import rerank_run, sweep
from evaluation.runner import evaluate
from inference.kirag_ranking import RankingConfig
from inference.memory import Memory
from inference.methods import SingleShotRAG
from inference.mind import MindRAG
from inference.reader import Reader
from models.encoder import EncoderConfig
from models.lm.config import LMConfig
from models.packaged import resolve_gguf
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
    options = parse_config(["--method", "kirag", "--aligner.name", "runs/x/model", "--kirag.constructor", "true",
                            "--kirag.constructor_candidates", "5", "--kirag.stop", "answer_in_chain",
                            "--kirag.ranking.retrieval_weight", "0.5", "--kirag.ranking.text_weight", "0.25"])
    assert options.label() == ("kirag constructor, top 5 to the LM, stop answer_in_chain, ranking 1/0.5/0.25 "
                               "(model, bm25)")
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
    del run["method_version"], run["config"]["ircot"]
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


def test_kirag_ranking_weights_swept_offline_equal_a_run_with_them(tmp_path, kirag_args):
    saved = tmp_path / "saved"
    assert main(kirag_args + ["--kirag.ranking.score_text", "true", "--output_dir", str(saved)]) == 0
    metrics, predictions = run_files(saved)
    assert all(isinstance(row[3], float) for p in predictions for row in p["passage_scores"])
    assert sorted(row[0] for row in predictions[0]["passage_scores"]) == sorted(predictions[0]["retrieved"])
    ranked = {p["question_id"]: [tuple(pair) for pair in p["passages"]] for p in predictions}
    assert rerank_run(saved, RankingConfig()) == ranked  # the paper's ranking, as saved
    fused = tmp_path / "fused"
    weights = RankingConfig(0.5, 0.25, 0.25)
    assert main(kirag_args + ["--kirag.ranking.triple_weight", "0.5", "--kirag.ranking.retrieval_weight", "0.25",
                              "--kirag.ranking.text_weight", "0.25", "--output_dir", str(fused)]) == 0
    fused_metrics, fused_predictions = run_files(fused)
    assert rerank_run(saved, weights) == {p["question_id"]: [tuple(pair) for pair in p["passages"]]
                                          for p in fused_predictions}
    rows = sweep([saved], [RankingConfig(), weights], k=5)
    assert [row["recall@5"] for row in rows] == pytest.approx([metrics["recall@5"], fused_metrics["recall@5"]])
    assert dict(rows[1]["questions"]) == {p["question_id"]: p["recall@5"] for p in fused_predictions}


@pytest.fixture
def tiny_encoder_dir(tmp_path, make_tiny_encoder):
    tiny = make_tiny_encoder()
    return save_tiny(tiny.model, tiny.tokenizer, tmp_path / "encoder")


def test_rag_rerank_reranks_one_retrieval_of_kirags_budget_without_a_kg(tmp_path, tiny_encoder_dir):
    common = ["--data.limit", "3", "--index.cache_dir", str(tmp_path / "idx")]
    rerank = common + ["--method", "rag+rerank", "--aligner.name", tiny_encoder_dir, "--kirag.k0", "5",
                       "--kirag.max_steps", "2", "--kirag.kg", str(tmp_path / "no-kg"),
                       "--aligner.cache_dir", str(tmp_path / "emb")]
    assert main(common + ["--top_k", "10", "--output_dir", str(tmp_path / "rag")]) == 0  # K0 · L = 5 · 2 passages
    for weight in ("0", "1"):
        assert main(rerank + ["--rerank.weight", weight, "--output_dir", str(tmp_path / weight)]) == 0
    (rag_metrics, rag_predictions), (metrics, retriever_order), (_, aligner_order) = (
        run_files(tmp_path / "rag"), run_files(tmp_path / "0"), run_files(tmp_path / "1"))
    assert not (tmp_path / "no-kg").exists()  # no KG is read or made
    assert metrics["retrieval_calls"] == 1 and metrics["passages_retrieved"] == 10 and metrics["llm_calls"] == 0
    assert metrics["recall@retrieved"] == rag_metrics["recall@10"]  # the same pool
    for single, mine, aligned in zip(rag_predictions, retriever_order, aligner_order):
        ids = [pid for pid, _ in single["passages"]]
        assert [pid for pid, _ in mine["passages"]] == ids == mine["retrieved"] == aligned["retrieved"]
        scores = {pid: a for pid, _, a in aligned["trace"][0]["scores"]}
        assert [pid for pid, _ in aligned["passages"]] == sorted(ids, key=lambda pid: -scores[pid])
    assert "| rag+rerank weight 1 (encoder, bm25) |" in (tmp_path / "1" / "metrics.md").read_text()
    assert list((tmp_path / "emb").iterdir())[0].name.startswith("passages-")


def test_a_run_of_an_earlier_version_of_its_method_is_refused(tmp_path, tiny_encoder_dir, capsys):
    out = tmp_path / "run"
    args = ["--method", "rag+rerank", "--aligner.name", tiny_encoder_dir, "--data.limit", "2",
            "--aligner.cache_dir", str(tmp_path / "emb"), "--index.cache_dir", str(tmp_path / "idx"),
            "--output_dir", str(out)]
    assert main(args) == 0
    run = json.loads((out / "run.json").read_text())
    assert run["method_version"] == 2
    del run["method_version"], run["config"]["rerank"]  # as the triple-level rag+rerank saved it
    (out / "run.json").write_text(json.dumps(run))
    assert main(args) == 2
    assert "version 1 of method rag+rerank, which is now version 2" in capsys.readouterr().err
    assert main(args + ["--overwrite", "true"]) == 0


def test_mdr_and_the_hybrid_retriever_end_to_end(tmp_path, tiny_encoder_dir):
    common = ["--encoder.name", tiny_encoder_dir, "--data.limit", "3", "--index.cache_dir", str(tmp_path / "idx")]
    assert main(common + ["--method", "mdr", "--retriever", "dense", "--mdr.beam", "3", "--mdr.budget", "4",
                          "--output_dir", str(tmp_path / "mdr")]) == 0
    metrics, predictions = run_files(tmp_path / "mdr")
    assert metrics["passages_retrieved"] == 4 and metrics["retrieval_calls"] == 4 and metrics["llm_calls"] == 0
    assert all([pid for pid, _ in p["passages"]] == p["retrieved"] for p in predictions)
    assert "| mdr budget 4 (dense) |" in (tmp_path / "mdr" / "metrics.md").read_text()
    assert main(common + ["--retriever", "hybrid", "--hybrid.depth", "20", "--output_dir", str(tmp_path / "hyb")]) == 0
    metrics, predictions = run_files(tmp_path / "hyb")
    assert metrics["questions"] == 3 and all(len(p["passages"]) == 10 for p in predictions)
    assert {f.name.split("-")[0] for f in (tmp_path / "idx").iterdir()} == {"bm25", "dense"}  # no index of its own


def test_ircot_with_a_tiny_lm_and_the_reader(tmp_path, make_tiny_lm):
    lm = make_tiny_lm()
    out = tmp_path / "run"
    assert main(["--method", "ircot", "--lm.name", save_tiny(lm.model, lm.tokenizer, tmp_path / "lm"),
                 "--ircot.k", "2", "--ircot.max_steps", "2", "--ircot.max_new_tokens", "8", "--ircot.budget", "3",
                 "--reader.enabled", "true", "--reader.max_new_tokens", "4", "--data.limit", "2",
                 "--index.cache_dir", str(tmp_path / "idx"), "--output_dir", str(out)]) == 0
    metrics, predictions = run_files(out)
    assert metrics["questions"] == 2 and {"em", "f1"} <= set(metrics)
    for p in predictions:
        sentences = [step for step in p["trace"] if "sentence" in step]
        assert 1 <= len(sentences) <= 2 and p["llm_calls"] == len(sentences) + 1  # the sentences + the reader
        assert p["retrieval_calls"] == sum("query" in step for step in p["trace"]) <= 3  # the question + 2 sentences
        assert len(p["retrieved"]) <= 3 and isinstance(p["answer"], str)


@pytest.mark.integration
def test_ircot_with_the_packaged_lm_on_two_demo_questions(tmp_path):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (`make install` builds it)")
    try:
        resolve_gguf(LMConfig().name)
    except ImportError as err:
        pytest.skip(str(err))
    out = tmp_path / "run"
    assert main(["--method", "ircot", "--lm.backend", "llama_cpp", "--ircot.k", "2", "--ircot.max_steps", "2", "--reader.enabled", "true",
                 "--data.limit", "2", "--index.cache_dir", str(tmp_path / "idx"), "--output_dir", str(out)]) == 0
    metrics, predictions = run_files(out)
    assert metrics["questions"] == 2 and {"em", "f1"} <= set(metrics)
    for p in predictions:
        sentences = [step["sentence"] for step in p["trace"] if "sentence" in step]
        assert sentences and all(s.strip() for s in sentences[:-1]), p["trace"]  # it reasons, in sentences
        assert p["llm_calls"] == len(sentences) + 1 and p["retrieval_calls"] == 1 + sum(
            "query" in step for step in p["trace"][1:])
        assert all(step["query"] == step["sentence"] for step in p["trace"][1:] if "query" in step)


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


@pytest.mark.parametrize("method", ["fixed_interval", "random_trigger", "dragin", "mind", "kirag+mind"])
def test_mind_methods_end_to_end_with_a_tiny_lm(method, tmp_path, kirag_args, make_tiny_lm, monkeypatch):
    lm = make_tiny_lm()
    out = tmp_path / "run"
    # θ = 0 for every trigger that has one: DRAGIN's fixed θ, and MIND's α = β = 0, so that any sentence
    # with a content word of positive H·A must retrieve.
    params = MindParams(alpha=0.0, beta=0.0).save(tmp_path / "trigger.json")
    args = kirag_args + ["--method", method, "--lm.name", save_tiny(lm.model, lm.tokenizer, tmp_path / "lm"),
                         "--mind.max_sentences", "2", "--mind.fixed_threshold", "0.0", "--mind.params", str(params),
                         "--mind.random_rate", "1.0", "--output_dir", str(out)]
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
            if method in ("fixed_interval", "random_trigger"):  # every sentence with a word retrieves (rate 1)
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


def test_mind_answers_through_the_reader_from_its_top_passages(tmp_path, kirag_args, make_tiny_lm, monkeypatch):
    lm = make_tiny_lm()
    args = kirag_args + ["--method", "fixed_interval", "--lm.name", save_tiny(lm.model, lm.tokenizer, tmp_path / "lm"),
                         "--mind.max_sentences", "1", "--reader.top_k", "2"]
    read = []

    def answer(self, questions, contexts):
        read.extend([p.id for p in c[: self.settings.top_k]] for c in contexts)  # what the reader reads
        return ["read"] * len(questions), [0] * len(questions)

    monkeypatch.setattr(Reader, "answer", answer)
    assert main(args + ["--output_dir", str(tmp_path / "own")]) == 0
    assert main(args + ["--output_dir", str(tmp_path / "read"), "--reader.enabled", "true"]) == 0
    (_, own), (_, predictions) = run_files(tmp_path / "own"), run_files(tmp_path / "read")
    assert [p["answer"] for p in predictions] == ["read"] * 3 and all(p["answer"] != "read" for p in own)
    assert read == [[pid for pid, _ in p["passages"][:2]] for p in predictions]  # one answer step for every method
    for mine, reader in zip(own, predictions, strict=True):  # the same retrieval, and one LLM call more
        assert reader["passages"] == mine["passages"] and reader["trace"] == mine["trace"]
        assert reader["llm_calls"] == mine["llm_calls"] + 1


def test_compare_puts_runs_side_by_side(tmp_path, kirag_args):
    rag, kirag, out = tmp_path / "rag", tmp_path / "kirag", tmp_path / "cmp"
    assert main(["--data.limit", "3", "--output_dir", str(rag), "--index.cache_dir", str(tmp_path / "idx")]) == 0
    assert main(kirag_args + ["--output_dir", str(kirag), "--name", "mine"]) == 0
    assert main(["compare", str(rag), str(kirag), "--output_dir", str(out)]) == 0
    result = json.loads((out / "comparison.json").read_text())
    rows, paired = result["runs"], result["paired"]
    assert [r["method"] for r in rows] == ["rag (bm25)", "mine"]
    assert rows[1]["recall@5"] == run_files(kirag)[0]["recall@5"]
    by_metric = {t["metric"]: t for t in paired}
    assert by_metric["recall@5"]["questions"] == 3  # paired, same questions
    assert by_metric["recall@5"]["difference"] == pytest.approx(100 * (rows[1]["recall@5"] - rows[0]["recall@5"]))
    assert 0 < by_metric["recall@5"]["p"] <= by_metric["recall@5"]["p (Holm)"] <= 1
    assert rows[0]["recall@5_low"] <= rows[0]["recall@5"] <= rows[0]["recall@5_high"]
    assert rows[1]["passages_retrieved"] >= 10 == rows[0]["passages_retrieved"]  # the loop saw more than it returns
    assert rows[1]["recall@retrieved"] >= rows[1]["recall@10"] and rows[0]["recall@retrieved"] == rows[0]["recall@10"]
    table = (out / "comparison.md").read_text()
    assert "| rag (bm25) | 3 | 3 |" in table and "| mine | 3 | 3 |" in table
    # each run's per-question scores file gives the same comparison as its folder
    again = tmp_path / "again"
    assert main(["compare", str(rag / "scores.jsonl.gz"), str(kirag / "scores.jsonl.gz"), "--output_dir", str(again)]) == 0
    assert json.loads((again / "comparison.json").read_text())["paired"] == paired
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
