"""KG archives: a store's passages as a committed gzip with provenance, restored into a fresh store,
written back by `build_kg` even when extraction is interrupted."""

import gzip
import json

import pytest

from core.config import ConfigError
from core.records import DataError
from core.types import Triple
from datamodules.loaders import DataConfig
from kg.archive import PROVENANCE_NAME, TRIPLES_NAME, read_archive, restore_archive, save_archive
from kg.build import KGConfig, build_kg
from kg.extraction import TripleExtractor
from kg.store import KGStore


def triples_of(pid, n):
    return [Triple.make(f"Head {pid}", f"rel {i}", f"tail {i}", pid, ["Head was here."]) for i in range(n)]


def filled_store(folder, count=3):
    store = KGStore(folder)
    store.add_many([(f"p{i}", triples_of(f"p{i}", i), i) for i in range(count)], "llm")
    store.add("q", triples_of("q", 1), source="openie")
    return store


def test_save_then_restore_gives_the_same_store_and_the_same_bytes(tmp_path):
    store = filled_store(tmp_path / "kg")
    ids = ["q", "p0", "p1", "p2", "not stored"]
    assert save_archive(tmp_path / "a", store, ids, {"lm": "x"}) == (4, 0)
    assert save_archive(tmp_path / "b", store, ids, {"lm": "x"}) == (4, 0)
    assert (tmp_path / "a" / TRIPLES_NAME).read_bytes() == (tmp_path / "b" / TRIPLES_NAME).read_bytes()
    assert list(read_archive(tmp_path / "a")) == ["q", "p0", "p1", "p2"]  # the order asked for

    fresh = KGStore(tmp_path / "fresh")
    assert restore_archive(tmp_path / "a", fresh) == 4
    for pid in store.passage_ids():
        assert (fresh.get(pid), fresh.rejected(pid), fresh.source(pid)) == \
            (store.get(pid), store.rejected(pid), store.source(pid))
    assert restore_archive(tmp_path / "a", fresh) == 0  # nothing twice

    provenance = json.loads((tmp_path / "a" / PROVENANCE_NAME).read_text())
    assert (provenance["passages"], provenance["triples"], provenance["sources"]) == (4, 4, {"openie": 1, "llm": 3})
    assert [h["passages_added"] for h in provenance["history"]] == [4]
    assert provenance["history"][0]["settings"] == {"lm": "x"}


def test_a_save_keeps_what_the_archive_holds_and_writes_nothing_when_nothing_is_new(tmp_path):
    store = filled_store(tmp_path / "kg")
    save_archive(tmp_path / "a", store, ["p0", "p1"], {})
    before = (tmp_path / "a" / TRIPLES_NAME).read_bytes()
    assert save_archive(tmp_path / "a", store, ["p1"], {}) == (0, 0)
    assert (tmp_path / "a" / TRIPLES_NAME).read_bytes() == before
    assert save_archive(tmp_path / "a", store, ["p2"], {}) == (1, 0)
    assert list(read_archive(tmp_path / "a")) == ["p0", "p1", "p2"]
    history = json.loads((tmp_path / "a" / PROVENANCE_NAME).read_text())["history"]
    assert [h["passages_added"] for h in history] == [2, 1]


def test_a_save_takes_the_store_entry_of_replaced_passages(tmp_path):
    store = filled_store(tmp_path / "kg")  # p0 has no triples
    save_archive(tmp_path / "a", store, ["p0", "p1"], {})
    store.replace_many([("p0", triples_of("p0", 2), 0)])
    assert save_archive(tmp_path / "a", store, ["p0", "p1"], {}) == (0, 0)  # not asked to replace: kept
    assert read_archive(tmp_path / "a")["p0"][1][1] == []
    assert save_archive(tmp_path / "a", store, ["p0", "p1", "p2"], {}, replaced=["p0", "not archived"]) == (1, 1)
    entries = read_archive(tmp_path / "a")
    assert list(entries) == ["p0", "p1", "p2"] and entries["p0"][1][1] == triples_of("p0", 2)
    provenance = json.loads((tmp_path / "a" / PROVENANCE_NAME).read_text())
    assert [(h["passages_added"], h["passages_replaced"]) for h in provenance["history"]] == [(2, 0), (1, 1)]
    assert provenance["triples"] == 2 + 1 + 2


def test_the_store_wins_over_the_archive(tmp_path):
    save_archive(tmp_path / "a", filled_store(tmp_path / "kg"), ["p1", "p2"], {})
    store = KGStore(tmp_path / "other")
    store.add("p1", [], rejected=7)
    assert restore_archive(tmp_path / "a", store) == 1
    assert (store.get("p1"), store.rejected("p1")) == ([], 7)


def test_a_malformed_archive_line_names_the_file_and_the_line(tmp_path):
    (tmp_path / "a").mkdir()
    good = json.dumps({"passage_id": "p", "source": "llm", "rejected": 0, "triples": []})
    with gzip.open(tmp_path / "a" / TRIPLES_NAME, "wt") as f:
        f.write(good + "\n" + '{"passage_id": "r", "source": "llm"}\n')
    with pytest.raises(DataError, match=r"triples\.jsonl\.gz.*line 2.*malformed store record"):
        restore_archive(tmp_path / "a", KGStore(tmp_path / "kg"))
    (tmp_path / "a" / TRIPLES_NAME).write_text("not gzip")
    with pytest.raises(OSError, match="not a readable gzip archive"):
        read_archive(tmp_path / "a")


def test_build_kg_restores_then_writes_back_even_when_interrupted(tmp_path, monkeypatch):
    passages = DataConfig().load().passages
    archive = tmp_path / "archive"
    seed = KGStore(tmp_path / "seed")
    seed.add(passages[0].id, [Triple.make(passages[0].title, "is", "seeded", passages[0].id, passages[0].sentences)])
    save_archive(archive, seed, [passages[0].id], {"seeded": True})

    calls = []

    def extract_one_then_stop(self, store, todo, show_progress=True, retry_empty=False):
        todo = [p for p in todo if not store.has(p.id)]
        calls.append([p.id for p in todo])
        store.add(todo[0].id, [], rejected=1)
        raise KeyboardInterrupt

    monkeypatch.setattr(TripleExtractor, "__init__", lambda self, *args, **kwargs: None)
    monkeypatch.setattr(TripleExtractor, "extract_into", extract_one_then_stop)
    config = KGConfig(store=str(tmp_path / "kg"), archive=str(archive), num_demos=0, limit=3)
    with pytest.raises(KeyboardInterrupt):
        build_kg(config)
    assert calls == [[p.id for p in passages[1:3]]]  # the archived passage was not extracted again
    assert list(read_archive(archive)) == [passages[0].id, passages[1].id]
    settings = json.loads((archive / PROVENANCE_NAME).read_text())["history"][-1]["settings"]
    assert settings["num_demos"] == 0 and settings["lm"]["name"] == config.lm.name and len(settings["prompt"]) == 16


def test_build_kg_retry_empty_writes_the_replacements_back_even_when_interrupted(tmp_path, monkeypatch):
    passages = DataConfig().load().passages[:2]
    archive = tmp_path / "archive"
    seed = KGStore(tmp_path / "seed")
    seed.add_many([(p.id, [], 0) for p in passages])  # both left without triples by an earlier run
    save_archive(archive, seed, [p.id for p in passages], {})
    retried = []

    def replace_first_then_stop(self, store, todo, show_progress=True, retry_empty=False):
        retried.append(retry_empty)
        first = passages[0]
        store.replace_many([(first.id, [Triple.make(first.title, "is", "found", first.id, first.sentences)], 0)])
        raise KeyboardInterrupt

    monkeypatch.setattr(TripleExtractor, "__init__", lambda self, *args, **kwargs: None)
    monkeypatch.setattr(TripleExtractor, "extract_into", replace_first_then_stop)
    config = KGConfig(store=str(tmp_path / "kg"), archive=str(archive), num_demos=0, limit=2, retry_empty=True)
    with pytest.raises(KeyboardInterrupt):
        build_kg(config)
    assert retried == [True]
    entries = read_archive(archive)
    assert [len(entries[p.id][1][1]) for p in passages] == [1, 0]
    assert json.loads((archive / PROVENANCE_NAME).read_text())["history"][-1]["passages_replaced"] == 1


def test_build_kg_restores_from_other_archives_without_writing_their_passages_again(tmp_path, monkeypatch):
    passages = DataConfig().load().passages[:3]
    gold = tmp_path / "gold"
    seed = KGStore(tmp_path / "seed")
    seed.add(passages[1].id, [Triple.make(passages[1].title, "is", "gold", passages[1].id, passages[1].sentences)])
    save_archive(gold, seed, [passages[1].id], {})
    extracted = []

    def extract_the_rest(self, store, todo, show_progress=True, retry_empty=False):
        todo = [p for p in todo if not store.has(p.id)]
        extracted.append([p.id for p in todo])
        store.add_many([(p.id, [], 0) for p in todo])
        return {}

    monkeypatch.setattr(TripleExtractor, "__init__", lambda self, *args, **kwargs: None)
    monkeypatch.setattr(TripleExtractor, "extract_into", extract_the_rest)
    rest = tmp_path / "rest"
    config = KGConfig(store=str(tmp_path / "kg"), archive=str(rest), restore_from=[str(gold)], num_demos=0, limit=3)
    summary = build_kg(config)
    assert extracted == [[passages[0].id, passages[2].id]]  # the gold archive's passage came from it
    assert list(read_archive(rest)) == [passages[0].id, passages[2].id]  # and is not written twice
    assert list(read_archive(gold)) == [passages[1].id]
    assert summary["archive"]["restored"] == 1 and summary["store"]["passages"] == 3

    with pytest.raises(ConfigError, match=r"restore_from.*no KG archive"):
        KGConfig(restore_from=[str(tmp_path / "missing")])
