"""Trace collection with a tiny random LM on demo questions, and the labelling rules and counts by hand."""

import json

from datamodules.loaders import DataConfig
from datamodules.trigger_traces import read_traces
from inference.mind import MindRAG
from training_data.traces import collect_traces, label_counts, supported, useful


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


def test_label_counts_by_hand():
    traces = [{"sentences": [{"label": 1}, {"label": 0}, {"label": 1}], "entities": [{"label": 0}]},
              {"sentences": [], "entities": [{"label": 1}, {"label": 1}]}]
    assert label_counts(traces) == {"sentences": 3, "sentences_needing_retrieval": 2, "entities": 3,
                                    "useful_entities": 2}
    assert label_counts([]) == {"sentences": 0, "sentences_needing_retrieval": 0, "entities": 0, "useful_entities": 0}
