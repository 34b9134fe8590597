"""Trace collection with a tiny random LM on demo questions, and the labelling rules by hand."""

import json

from datamodules.loaders import DataConfig
from datamodules.trigger_traces import collect_traces, read_traces, supported, useful
from inference.mind import MindRAG


def test_labelling_rules_by_hand():
    gold = "Ostrel Brewing. Ostrel Brewing was founded by Ana Corvel in the village of Drusk."
    assert supported("Ostrel Brewing was founded by Ana Corvel.", gold)
    assert not supported("The brewery was founded in Paris in 1820.", gold)  # 1 of 5 content words
    assert supported("It is.", gold)  # nothing to check: no content word
    assert useful("Ana Corvel", gold, ["Drusk"]) and useful("the village Drusk", gold, ["Drusk"])
    assert not useful("Paris", gold, ["Drusk"])


def test_collect_traces_writes_labelled_signals_and_resumes(tmp_path, tiny_lm):
    demo = DataConfig(limit=3).load()
    mind = MindRAG(tiny_lm, None, trigger="never", max_sentences=2, max_new_tokens=12,
                   record_signals=True)
    out = tmp_path / "traces.jsonl"
    summary = collect_traces(mind, demo.questions, demo.passage_by_id(), out, show_progress=False)
    traces = read_traces(out)
    labels = {kind: [item["label"] for t in traces for item in t[kind]] for kind in ("sentences", "entities")}
    assert summary == {"questions": 3, "already_written": 0, "written": 3,
                       "sentences": len(labels["sentences"]), "sentences_needing_retrieval": sum(labels["sentences"]),
                       "entities": len(labels["entities"]), "useful_entities": sum(labels["entities"])}
    assert [t["question_id"] for t in traces] == [q.id for q in demo.questions]
    assert all(s["entropy"] for t in traces for s in t["sentences"])  # every kept sentence has its signals
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert all("closed_book_answer" in r for r in records)
    again = collect_traces(mind, demo.questions, demo.passage_by_id(), out, show_progress=False)
    assert again == {**summary, "already_written": 3, "written": 0}
