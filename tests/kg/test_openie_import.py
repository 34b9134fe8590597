"""Importing HippoRAG's OpenIE triples into the store, on a hand-made file and on the shared MuSiQue file;
`build_kg` (`prepare.py kg`) with an OpenIE file."""

import json

import pytest

from core.records import DataError
from core.types import Passage
from datamodules.loaders import DataConfig, load_benchmark
from kg.build import KGConfig, build_kg
from kg.openie_import import import_openie
from kg.store import KGStore

CORPUS = [
    Passage.make("Ostrel", "Ostrel is a brewery. It was founded by Ana Corvel."),
    Passage.make("Ana Corvel", "Ana Corvel is a brewer. She was born in Drusk."),
    Passage.make("Vell", "Vell is a river."),
    Passage.make("Vell", "Vell is a village."),
]


def doc(title, text, triples, passage=True):
    record = {"title": title, "text": text, "extracted_entities": [], "extracted_triples": triples}
    return record | ({"passage": f"{title}\n{text}"} if passage else {})


def write(tmp_path, docs):
    path = tmp_path / "openie.json"
    path.write_text(json.dumps({"docs": docs, "ents_by_doc": []}))
    return path


def test_imports_matched_docs_and_counts_malformed_duplicates_and_unmatched(tmp_path):
    path = write(tmp_path, [
        doc("Ostrel", "Ostrel is a brewery.  It was founded by Ana Corvel.", [  # whitespace differs: still matches
            ["Ostrel", "founded by", "Ana Corvel"], ["Ostrel", "is a", "brewery"],
            ["ostrel", "Founded by", "ana corvel"],  # a repeat of the first
            ["Ostrel", "brewery"], ["Ostrel", "is", "a", "brewery"], ["Ostrel", "", "x"], ["Ostrel", "age", 12], "text",
        ]),
        doc("Ana Corvel", "An older version of the text.", [["Ana Corvel", "born in", "Drusk"]]),  # unique title
        doc("Vell", "Vell is a town.", [["Vell", "is a", "town"]]),  # two passages titled Vell: unmatched
        doc("Nowhere", "Not in the corpus.", [["Nowhere", "is", "absent"]]),
        {"passage": "Vell\nVell is a river.", "extracted_entities": [], "extracted_triples": []},  # passage-only doc
    ])
    store = KGStore(tmp_path / "kg")
    summary = import_openie(path, CORPUS, store)
    assert summary == {"docs": 5, "matched": 3, "triples_in_file": 11, "malformed": 5, "duplicates": 1,
                       "unmatched_docs": 2, "duplicate_docs": 0, "already_stored": 0, "passages_imported": 3,
                       "imported": 3}
    ostrel, ana, river = CORPUS[0].id, CORPUS[1].id, CORPUS[2].id
    assert [t.text for t in store.get(ostrel)] == ["<Ostrel; founded by; Ana Corvel>", "<Ostrel; is a; brewery>"]
    assert [t.sentence_index for t in store.get(ostrel)] == [1, 0]
    assert (store.rejected(ostrel), store.source(ostrel)) == (5, "openie")
    assert [t.text for t in store.get(ana)] == ["<Ana Corvel; born in; Drusk>"]
    assert store.get(river) == [] and not store.has(CORPUS[3].id)

    again = import_openie(path, CORPUS, KGStore(tmp_path / "kg"))
    assert (again["already_stored"], again["passages_imported"], again["imported"]) == (3, 0, 0)
    assert len(KGStore(tmp_path / "kg")) == 3


def test_a_file_matching_no_passage_or_without_docs_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="none of its 1 docs"):
        import_openie(write(tmp_path, [doc("Nowhere", "x", [])]), CORPUS, KGStore(tmp_path / "kg"))
    (tmp_path / "bad.json").write_text(json.dumps({"documents": []}))
    with pytest.raises(DataError, match="missing field 'docs'"):
        import_openie(tmp_path / "bad.json", CORPUS, KGStore(tmp_path / "kg"))
    with pytest.raises(DataError, match=r"docs\[0\]: field 'extracted_triples' should be list"):
        import_openie(write(tmp_path, [doc("Vell", "Vell is a river.", "none")]), CORPUS, KGStore(tmp_path / "kg"))


def test_build_kg_imports_the_first_passages_and_returns_the_summary_silently(tmp_path, capsys):
    passages = DataConfig().load().passages[:3]
    path = write(tmp_path, [doc(p.title, p.text, [[p.title, "is", f"passage {i}"]]) for i, p in enumerate(passages)])
    config = KGConfig(store=str(tmp_path / "kg"), openie=str(path), limit=2)
    summary = build_kg(config)
    assert capsys.readouterr().out == ""  # prepare.py prints it
    assert (summary["docs"], summary["matched"], summary["unmatched_docs"], summary["imported"]) == (3, 2, 1, 2)
    assert summary["store"] == KGStore(tmp_path / "kg").stats() and summary["store"]["by_source"] == {"openie": 2}
    assert [t.text for t in KGStore(tmp_path / "kg").get(passages[1].id)] == [f"<{passages[1].title}; is; passage 1>"]
    again = build_kg(config)
    assert (again["already_stored"], again["imported"], again["store"]["passages"]) == (2, 0, 2)


@pytest.mark.integration
def test_shared_musique_openie_file(shared_data, tmp_path):
    folder = shared_data / "musique"
    bench = load_benchmark("musique", folder / "hipporag_train_100.json", folder / "hipporag_train_100_corpus.json")
    store = KGStore(tmp_path)
    summary = import_openie(folder / "hipporag_train_100_openie_gpt35.json", bench.passages, store)
    assert summary == {"docs": 1890, "matched": 1890, "triples_in_file": 17419, "malformed": 185, "duplicates": 30,
                       "unmatched_docs": 0, "duplicate_docs": 0, "already_stored": 0, "passages_imported": 1890,
                       "imported": 17419 - 185 - 30}
    stats = KGStore(tmp_path).stats()
    assert (stats["passages"], stats["triples"], stats["passages_without_triples"]) == (1890, 17204, 2)
