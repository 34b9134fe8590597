"""Trace collection with a tiny random LM on demo questions and with a scripted LM, and the labelling
rules and counts by hand."""

import json
import re

import pytest
import torch

from core.config import ConfigError
from core.records import DataError
from core.types import Passage, Question
from datamodules.loaders import DataConfig
from datamodules.trigger_traces import read_traces
from inference.mind import MindRAG, MindSettings
from models.lm.interface import Generation, TokenSignals
from training_data.traces import (TracesConfig, claims, collect_traces, label_counts, needs_retrieval, question_trace,
                                   relabel, useful)

QUESTION = "Where was the founder of Ostrel Brewing born?"


def test_claims_are_new_names_and_numbers():
    assert claims("The founder of Ostrel Brewing was a brewer", QUESTION) == frozenset()  # restates the question
    assert claims("Ostrel Brewing was founded by Ana Corvel in 1,897", QUESTION) == {"ana corvel", "1897"}
    # a capital at the start marks the position, not a name; stopwords at a run's ends are trimmed
    assert claims("So the answer is Drusk", QUESTION) == {"drusk"} and claims("Drusk is a village", QUESTION) == set()
    assert claims("The Beatles played In Hamburg", QUESTION) == {"beatles", "hamburg"}


@pytest.mark.parametrize("rule", ["change", "claims"])
def test_labelling_rules_by_hand(rule):
    gold = "Ostrel Brewing. Ostrel Brewing was founded by Ana Corvel in 1897 in the village of Drusk."
    assert not needs_retrieval("Ostrel Brewing was founded by Ana Corvel", "It was founded by Ana Corvel", QUESTION,
                               gold, rule)
    # a claim the gold passages do not hold, which they leave as it was: only `claims` asks for retrieval
    assert needs_retrieval("Ostrel Brewing was founded by Tomas Reyes", "Ostrel Brewing was founded by Tomas Reyes",
                           QUESTION, gold, rule) == (rule == "claims")
    assert needs_retrieval("It was founded in 1897", "It was founded in 1897 by Ana Corvel", QUESTION, gold, rule)
    assert not needs_retrieval("It is old", "It is very old", QUESTION, gold, rule)  # no claims either way
    assert needs_retrieval("It is old", "Ana Corvel founded it", QUESTION, gold, rule)  # the gold passages add one
    assert useful("Ana Corvel", gold, ["Drusk"]) and useful("the village Drusk", gold, ["Drusk"])
    assert not useful("Paris", gold, ["Drusk"])


def scripted(text, signals):
    pieces = re.findall(r"\s*\S+", text)
    n = len(pieces)
    return Generation(text, 1, n, list(range(n)), TokenSignals(
        pieces, torch.full((n,), 1.0), torch.full((n,), 0.1), torch.full((n,), 0.5)) if signals else None)


class ScriptedTraceLM:
    """Closed book, the next of `drafts`; with facts in the prompt, the next of `with_gold`; prompts recorded."""

    def __init__(self, drafts, with_gold, entities):
        self.drafts, self.with_gold, self.entities, self.gold_prompts = list(drafts), list(with_gold), entities, []

    def format_chat(self, messages):
        return "\n".join(m["content"] for m in messages) + "\nA:"

    def generate(self, prompts, return_signals=False, **kwargs):
        if "Facts:" in prompts[0]:
            self.gold_prompts.append(prompts[0])
            return [scripted(self.with_gold.pop(0), return_signals)]
        return [scripted(self.drafts.pop(0), return_signals)]

    def chat(self, conversations, return_signals=False, **kwargs):
        return [scripted(self.entities, return_signals)]


def test_sentence_labels_from_claims_and_a_regeneration_with_the_gold_passages():
    passages = [Passage.make("Ostrel Brewing", "Ostrel Brewing was founded by Ana Corvel in 1897 and sold in 1901."),
                Passage.make("Ana Corvel", "Ana Corvel was born in Drusk.")]
    question = Question("q1", QUESTION, ["Drusk"], [p.id for p in passages])
    drafts = ["The founder of Ostrel Brewing was a brewer",  # restates the question: 0
              "Ostrel Brewing was founded by Tomas Reyes",  # a name the gold passages lack: 1
              "Ostrel Brewing was founded by Ana Corvel",  # supported, and the same with the gold passages: 0
              "Ana Corvel sold it in 1897"]  # supported (both in the passage), but the gold passages change it: 1
    with_gold = ["The founder of Ostrel Brewing was a brewer", "Ostrel Brewing was founded by Ana Corvel",
                 "Ostrel Brewing was founded by Ana Corvel", "Ana Corvel sold it in 1901"]
    lm = ScriptedTraceLM(drafts + [" Drusk"], with_gold, "Ana Corvel")  # " Drusk" completes "So the answer is"
    mind = MindRAG(lm, None, trigger="never", record_signals=True, settings=MindSettings(max_sentences=4))
    trace = question_trace(mind, question, {p.id: p for p in passages}, rule="claims")
    assert [s["text"] for s in trace["sentences"]] == drafts
    assert [s["regenerated"] for s in trace["sentences"]] == with_gold
    assert [s["label"] for s in trace["sentences"]] == [0, 1, 0, 1] and trace["sentence_label"] == "claims"
    # by `change` the second keeps its label: the gold passages make the LM name another founder
    assert [s["label"] for s in relabel(trace, question, {p.id: p for p in passages}, "change")["sentences"]] == [
        0, 1, 0, 1]
    unchanged = {**trace, "sentences": [{**s, "regenerated": s["text"]} for s in trace["sentences"]]}
    assert [s["label"] for s in relabel(unchanged, question, {p.id: p for p in passages}, "claims")["sentences"]] == [
        0, 1, 0, 0]
    assert [s["label"] for s in relabel(unchanged, question, {p.id: p for p in passages}, "change")["sentences"]] == [
        0, 0, 0, 0]
    assert trace["closed_book_answer"] == "Drusk" and lm.drafts == lm.with_gold == []
    for i, prompt in enumerate(lm.gold_prompts):  # the gold passages as facts, after the same answer so far
        assert f"Facts:\n- {passages[0].title}: {passages[0].text}\n- {passages[1].title}: " in prompt
        assert prompt.endswith("A:" + "".join(f"{d}. " for d in drafts[:i])), prompt
    sentence = trace["sentences"][0]
    assert sentence["attention"] == pytest.approx([0.1] * 8) and sentence["attention_in_sentence"] == [0.5] * 8
    (entity,) = trace["entities"]
    assert entity["text"] == "Ana Corvel" and entity["attention_in_sentence"] == [0.5, 0.5] and entity["label"] == 1


def test_collect_traces_writes_labelled_signals_and_resumes(tmp_path, tiny_lm):
    demo = DataConfig(limit=3).load()
    mind = MindRAG(tiny_lm, None, trigger="never", settings=MindSettings(max_sentences=2), max_new_tokens=12,
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
    sentences = [s for r in records for s in r["sentences"]]
    assert sentences and all(len(s["attention_in_sentence"]) == len(s["entropy"]) and "regenerated" in s
                             for s in sentences)
    again = collect_traces(mind, demo.questions, demo.passage_by_id(), out, show_progress=False)
    assert again == {**summary, "already_written": 3, "written": 0}


class NoLM:
    """An LM that must not be called: relabelling reads the stored texts."""

    def __getattr__(self, name):
        raise AssertionError(f"the LM was asked ({name})")


def test_collect_traces_relabels_another_rule_without_the_lm(tmp_path):
    passages = [Passage.make("Ostrel Brewing", "Ostrel Brewing was founded by Ana Corvel in 1897.")]
    question = Question("q1", QUESTION, ["Drusk"], [passages[0].id])
    sentence = {"entropy": [1.0], "content": [1.0], "attention": [0.1], "attention_in_sentence": [0.5]}
    record = {"question_id": "q1", "closed_book_answer": "Paris", "entities": [], "sentences": [
        {**sentence, "text": "It was founded by Tomas Reyes", "regenerated": "It was founded by Tomas Reyes",
         "label": 1},
        {**sentence, "text": "It was founded in 1897", "regenerated": "It was founded by Ana Corvel", "label": 1}]}
    out = tmp_path / "traces.jsonl"
    out.write_text(json.dumps(record) + "\n")  # written before the rule was recorded: labelled by `claims`
    mind = MindRAG(NoLM(), None, trigger="never", record_signals=True)
    summary = collect_traces(mind, [question], {p.id: p for p in passages}, out, "change", show_progress=False)
    (relabelled,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert [s["label"] for s in relabelled["sentences"]] == [0, 1] and relabelled["sentence_label"] == "change"
    assert relabelled["sentences"][0]["entropy"] == [1.0] and relabelled["closed_book_answer"] == "Paris"
    assert summary["already_written"] == 1 and summary["written"] == 0 and summary["sentences_needing_retrieval"] == 1
    with pytest.raises(DataError, match=r"line 1: labelled by rule 'change'.*'q1' is not among the 0 traced"):
        collect_traces(mind, [], {}, out, "claims", show_progress=False)


def test_sentence_label_must_be_a_known_rule():
    with pytest.raises(ConfigError, match="sentence_label"):
        TracesConfig(sentence_label="always")


def test_label_counts_by_hand():
    traces = [{"sentences": [{"label": 1}, {"label": 0}, {"label": 1}], "entities": [{"label": 0}]},
              {"sentences": [], "entities": [{"label": 1}, {"label": 1}]}]
    assert label_counts(traces) == {"sentences": 3, "sentences_needing_retrieval": 2, "entities": 3,
                                    "useful_entities": 2}
    assert label_counts([]) == {"sentences": 0, "sentences_needing_retrieval": 0, "entities": 0, "useful_entities": 0}
