"""Silver chains on hand-made cases, the chains file (resume after a kill), and the shared MuSiQue slice."""

import json

import pytest

from core.chains import read_chains
from core.text import token_f1
from core.types import Question, Triple
from datamodules.loaders import DataConfig
from kg.openie_import import import_openie
from kg.store import KGStore
from training_data.chain_quality import chain_report
from training_data.chains import ChainsConfig, build_chains_file
from training_data.silver_chains import ChainBuilder, contains_answer, same_entity, substitute_hops


def triple(head, relation, tail, pid):
    return Triple.make(head, relation, tail, pid)


def texts(chain):
    return [t.text for t in chain.triples]


# A 2-hop bridge. The distractor shares more words with the question ("Ostrel Brewing", "town")
# than the bridge triple does, but nothing in passage B continues from it.
BREWERY = [
    triple("Ostrel Brewing", "located in", "town of Brenn", "A"),
    triple("Ostrel Brewing", "founded by", "Ana Corvel", "A"),
]
BREWER = [triple("Ana Corvel", "studied in", "Velm", "B"), triple("Ana Corvel", "born in", "Drusk", "B")]
BRIDGE_POOL = {"A": BREWERY, "B": BREWER}
BRIDGE = Question("q1", "In which town was the founder of Ostrel Brewing born?", ["Drusk"], ["A", "B"], "bridge")


def test_helpers_normalise_and_match_answers_and_entities():
    assert token_f1("The Ostrel Brewing!", "ostrel brewing") == 1.0
    assert contains_answer(triple("Hank Snow", "moved to", "Nashville, Tennessee", "p"), ["Tennessee"])
    assert contains_answer(triple("X", "released in", "in 1903", "p"), ["1903"])
    assert not contains_answer(triple("Ostrel", "founded in", "1903", "p"), ["190"])
    assert same_entity("Nashville, Tennessee", "Tennessee") and same_entity("the United States", "United States")
    assert not same_entity("Ostrel Brewing", "Ostrel Brew") and not same_entity("the", "the film")
    assert substitute_hops("Where was #1 born before #3?", ["Ana Corvel"]) == "Where was Ana Corvel born before #3?"
    assert substitute_hops("Hello Love >> performer", []) == "Hello Love   performer"


def test_search_follows_the_bridge_entity_not_the_wordier_distractor():
    chain = ChainBuilder(use_ground_truth=False).build(BRIDGE, BRIDGE_POOL)
    assert texts(chain) == ["<Ostrel Brewing; founded by; Ana Corvel>", "<Ana Corvel; born in; Drusk>"]
    assert (chain.source, chain.ordered, chain.complete) == ("search", True, True)


def test_search_links_through_a_passage_mention_when_no_entity_is_shared():
    question = Question("q", "When was the clock built in the city where Karel Purkyne passed away?", ["1410"], ["A", "B"])
    pool = {"A": [triple("Karel Purkyne", "worked in", "city of Vienna", "A"), triple("Karel Purkyne", "died in", "Prague", "A")],
            "B": [triple("mechanical clock", "dates back to", "1410", "B")]}
    texts_by_pid = {"B": "Prague astronomical clock. Its mechanical clock dates back to 1410."}
    chain = ChainBuilder(use_ground_truth=False).build(question, pool, texts_by_pid)
    assert texts(chain) == ["<Karel Purkyne; died in; Prague>", "<mechanical clock; dates back to; 1410>"]
    assert chain.complete


def test_without_a_triple_holding_the_answer_the_chain_is_incomplete():
    question = Question("q", BRIDGE.question, ["Kirton"], ["A", "B"], "bridge")
    chain = ChainBuilder(use_ground_truth=False).build(question, BRIDGE_POOL)
    assert not chain.complete and len(chain.triples) == 2


def test_comparison_takes_one_agreeing_triple_per_passage_unordered():
    question = Question("q", "Which was founded first, Ostrel Brewing or Velm Press?", ["Velm Press"],
                        ["A", "B"], "comparison")
    pool = {"A": [triple("Ostrel Brewing", "based in", "Drusk", "A"), triple("Ostrel Brewing", "founded in", "1901", "A")],
            "B": [triple("Velm Press", "publishes", "poetry", "B"), triple("Velm Press", "founded in", "1850", "B")]}
    chain = ChainBuilder(use_ground_truth=False).build(question, pool)
    assert texts(chain) == ["<Ostrel Brewing; founded in; 1901>", "<Velm Press; founded in; 1850>"]
    assert (chain.ordered, chain.complete) == (False, True)


def test_evidences_map_to_best_matching_triples_preferring_an_unused_passage():
    copy_in_a = triple("Ana Corvel", "born in", "Drusk", "A")  # the same fact, also in passage A
    pool = {"A": [*BREWERY, copy_in_a], "B": BREWER}
    question = Question("q", BRIDGE.question, ["Drusk"], ["A", "B"], "bridge",
                        gold_triples=[["Ostrel Brewing", "founded by", "Ana Corvel"], ["Ana Corvel", "born in", "Drusk"]])
    chain = ChainBuilder().build(question, pool)
    assert texts(chain) == ["<Ostrel Brewing; founded by; Ana Corvel>", "<Ana Corvel; born in; Drusk>"]
    assert [t.passage_id for t in chain.triples] == ["A", "B"]
    assert (chain.source, chain.complete) == ("evidences", True)

    question.gold_triples.append(["Drusk", "twinned with", "Harlow"])  # matches nothing
    unmatched = ChainBuilder().from_evidences(question, pool)
    assert len(unmatched.triples) == 2 and not unmatched.complete


def test_decomposition_substitutes_earlier_answers_into_later_hops():
    pool = {"A": BREWERY, "B": [triple("Mira Holt", "born in", "Drusk", "B"), *BREWER]}
    question = Question("q", BRIDGE.question, ["Drusk"], ["A", "B"], "2hop", decomposition=[
        {"question": "Who founded Ostrel Brewing?", "answer": "Ana Corvel"},
        {"question": "Where was #1 born?", "answer": "Drusk"},
    ])
    chain = ChainBuilder().build(question, pool)
    assert texts(chain) == ["<Ostrel Brewing; founded by; Ana Corvel>", "<Ana Corvel; born in; Drusk>"]
    assert (chain.source, chain.ordered, chain.complete) == ("decomposition", True, True)

    question.decomposition[1]["answer"] = "Kirton"  # no triple of passage B holds it
    question.answers = ["Kirton"]
    fallback = ChainBuilder().build(question, pool)
    assert fallback.source == "decomposition" and not fallback.complete and len(fallback.triples) == 2


def write_benchmark(tmp_path, questions, passages):
    (tmp_path / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    (tmp_path / "passages.jsonl").write_text("".join(json.dumps(p) + "\n" for p in passages))
    return DataConfig("unified", str(tmp_path / "questions.jsonl"), str(tmp_path / "passages.jsonl"))


def test_chains_file_resumes_after_a_partial_line(tmp_path):
    passages = [{"id": pid, "title": title, "text": text} for pid, title, text in [
        ("A", "Ostrel Brewing", "Ostrel Brewing is in the town of Brenn. It was founded by Ana Corvel."),
        ("B", "Ana Corvel", "Ana Corvel studied in Velm. She was born in Drusk."),
        ("C", "Velm", "Velm is a city with a university."),
    ]]
    questions = [{"id": f"q{i}", "question": BRIDGE.question, "answers": ["Drusk"], "gold_passage_ids": ["A", "B"],
                  "type": "bridge"} for i in (1, 2)]
    data = write_benchmark(tmp_path, questions, passages)
    store = KGStore(tmp_path / "kg")
    for pid, triples in BRIDGE_POOL.items():
        store.add(pid, triples)
    store.add("C", [triple("Velm", "has", "university", "C")])
    config = ChainsConfig(data=data, kg_store=str(tmp_path / "kg"), output=str(tmp_path / "chains.jsonl"),
                          k0=3, index_cache_dir=None)

    config.data.limit = 1
    assert build_chains_file(config)["written"] == 1
    with open(config.output, "a") as f:
        f.write('{"question_id": "q2", "question": "In wh')  # a kill in the middle of a line
    config.data.limit = None
    summary = build_chains_file(config)
    assert (summary["already_written"], summary["written"], summary["complete"]) == (1, 1, 1)
    records = read_chains(config.output)
    assert [r.question_id for r in records] == ["q1", "q2"]
    assert records[0].chain == records[1].chain and records[0].negatives == records[1].negatives
    assert json.loads(open(config.output).readline())["source"] == "search"
    assert build_chains_file(config)["written"] == 0


@pytest.mark.integration
def test_shared_musique_slice_with_gpt35_triples(shared_data, tmp_path):
    folder = shared_data / "musique"
    data = DataConfig("musique", str(folder / "hipporag_train_100.json"),
                      str(folder / "hipporag_train_100_corpus.json"), limit=30)
    import_openie(folder / "hipporag_train_100_openie_gpt35.json", data.load().passages, KGStore(tmp_path / "kg"))
    config = ChainsConfig(data=data, kg_store=str(tmp_path / "kg"), output=str(tmp_path / "chains.jsonl"),
                          index_cache_dir=None)
    summary = build_chains_file(config)
    report = chain_report(config)
    print(summary, json.dumps(report))
    assert summary["by_source"] == {"decomposition": 30}
    assert report["file"]["complete"] >= 0.6 and report["file"]["decomposition"]["at_hop"] >= 0.8
    assert report["search"]["complete"] >= 0.6 and report["search"]["decomposition"]["at_hop"] >= 0.5
    records = read_chains(config.output)
    assert all(len(hop) == 30 for r in records for hop in r.negatives)
    assert all(not {t.id for t in r.chain} & {t.id for hop in r.negatives for t in hop} for r in records)
