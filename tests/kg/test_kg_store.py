"""The triple store: durable round trips, crash leftovers, deduplication and the Parquet snapshot."""

import json
import threading

import pytest
from filelock import FileLock

from core.records import DataError
from core.types import Triple
from kg import store as kg_store
from kg.store import KGStore


def triples_of(pid, n, sentences=("Ostrel was founded by Ana.", "Ana was born in Drusk.")):
    return [Triple.make(f"Head {pid}", f"rel {i}", f"tail {i}", pid, list(sentences)) for i in range(n)]


def fill(store, first=0, count=3, source="llm"):
    store.add_many([(f"p{i}", triples_of(f"p{i}", i % 3), i) for i in range(first, first + count)], source)


def log_lines(store):
    return store.log_path.read_text().splitlines()


def test_round_trip_keeps_passages_triples_and_counts(tmp_path):
    store = KGStore(tmp_path)
    fill(store, count=3)
    assert store.add("q", [], rejected=4, source="openie")
    again = KGStore(tmp_path)
    assert len(again) == 4 and again.passage_ids() == ["p0", "p1", "p2", "q"]
    for pid in store.passage_ids():
        assert again.get(pid) == store.get(pid)
    assert again.get("p2") == triples_of("p2", 2) and again.get("p0") == []
    assert (again.rejected("q"), again.source("q"), again.source("p1")) == (4, "openie", "llm")
    assert list(again.triples()) == triples_of("p1", 1) + triples_of("p2", 2)
    assert again.stats() == {"passages": 4, "triples": 3, "rejected": 7, "passages_without_triples": 2,
                             "by_source": {"llm": 3, "openie": 1}, "duplicates_on_load": 0}
    with pytest.raises(KeyError):
        again.get("unknown")


def test_a_stored_passage_is_never_written_twice(tmp_path):
    store = KGStore(tmp_path)
    assert store.add("p", triples_of("p", 2))
    assert not store.add("p", triples_of("p", 1))
    assert store.add_many([("p", [], 0), ("r", [], 0), ("r", triples_of("r", 1), 0)]) == 1
    assert len(log_lines(store)) == 2
    assert KGStore(tmp_path).get("p") == triples_of("p", 2) and KGStore(tmp_path).get("r") == []


def test_replace_many_rewrites_passages_in_place_over_a_snapshot(tmp_path):
    store = KGStore(tmp_path)
    fill(store, count=4)  # p0 and p3 have no triples
    store.compact()
    with open(store.log_path, "a") as f:  # a duplicate of p0 (ignored on load): dropped by the rewrite
        f.write(json.dumps({"passage_id": "p0", "source": "llm", "rejected": 9, "triples": []}) + "\n")
    new = triples_of("p0", 2)
    assert store.replace_many([("p0", new, 0), ("p9", triples_of("p9", 1), 0)]) == 2
    assert not (tmp_path / "snapshot").exists()
    for opened in (store, KGStore(tmp_path)):
        assert opened.passage_ids() == ["p0", "p1", "p2", "p3", "p9"]
        assert opened.get("p0") == new and opened.rejected("p0") == 0 and opened.get("p2") == triples_of("p2", 2)
        assert opened.duplicates_on_load == 0
    assert [json.loads(line)["passage_id"] for line in log_lines(store)] == ["p0", "p1", "p2", "p3", "p9"]
    assert store.replace_many([]) == 0
    with pytest.raises(ValueError, match="do not belong"):
        store.replace_many([("p1", triples_of("p2", 1), 0)])
    assert KGStore(tmp_path).get("p1") == triples_of("p1", 1)


def test_duplicate_lines_in_the_log_are_tolerated_first_wins(tmp_path):
    store = KGStore(tmp_path)
    fill(store, count=2)
    with open(store.log_path, "a") as f:
        f.write(json.dumps({"passage_id": "p1", "source": "llm", "rejected": 9, "triples": []}) + "\n")
    again = KGStore(tmp_path)
    assert again.get("p1") == triples_of("p1", 1) and again.rejected("p1") == 1
    assert again.stats()["duplicates_on_load"] == 1


def test_a_partial_line_is_left_out_by_readers_and_cut_off_by_the_next_writer(tmp_path):
    store = KGStore(tmp_path)
    fill(store, count=2)
    complete = store.log_path.read_bytes()
    torn = b'{"passage_id": "p2", "source": "llm", "triples": [{"id": "ab'
    with open(store.log_path, "ab") as f:
        f.write(torn)
    again = KGStore(tmp_path)
    assert again.passage_ids() == ["p0", "p1"]
    assert store.log_path.read_bytes() == complete + torn  # a reader writes nothing
    fill(again, first=2, count=1)
    assert store.log_path.read_bytes().startswith(complete) and torn not in store.log_path.read_bytes()
    assert KGStore(tmp_path).passage_ids() == ["p0", "p1", "p2"]


def test_a_last_record_without_its_newline_is_kept_by_readers_and_writers(tmp_path):
    store = KGStore(tmp_path)
    fill(store, count=2)
    store.log_path.write_bytes(store.log_path.read_bytes()[:-1])  # a hand edit trims the final newline
    trimmed = store.log_path.read_bytes()
    assert KGStore(tmp_path, create=False).passage_ids() == ["p0", "p1"]
    assert store.log_path.read_bytes() == trimmed
    fill(KGStore(tmp_path), first=2, count=1)
    assert KGStore(tmp_path).passage_ids() == ["p0", "p1", "p2"]
    assert store.log_path.read_bytes().startswith(trimmed + b"\n")


def test_a_malformed_complete_line_is_a_data_error_naming_file_and_line(tmp_path):
    store = KGStore(tmp_path)
    fill(store, count=1)
    with open(store.log_path, "a") as f:
        f.write('{"passage_id": "x"}\n')
    with pytest.raises(DataError, match=r"triples\.jsonl: line 2: malformed store record"):
        KGStore(tmp_path)


def test_missing_lists_unstored_ids_once_in_input_order(tmp_path):
    store = KGStore(tmp_path)
    fill(store, count=2)
    assert store.missing(["z", "p1", "a", "z", "p0"]) == ["z", "a"]
    order = [f"q{i}" for i in (7, 3, 11, 0, 5, 9, 1, 12, 4, 8, 2, 10, 6)]
    assert store.missing(order + ["p0"] + order) == order
    assert store.has("p0") and "p1" in store and not store.has("z")


def test_rejects_foreign_triples_and_unknown_sources(tmp_path):
    store = KGStore(tmp_path)
    with pytest.raises(ValueError, match="do not belong"):
        store.add("p", triples_of("other", 1))
    with pytest.raises(ValueError, match="source"):
        store.add("p", [], source="gpt")
    assert len(store) == 0


def test_to_dataset_is_the_flat_triple_table(tmp_path):
    store = KGStore(tmp_path)
    fill(store, count=3)
    data = store.to_dataset()
    assert data.column_names == ["id", "head", "relation", "tail", "passage_id", "sentence_index", "text"]
    assert len(data) == 3
    row = data[0]
    (first,) = triples_of("p1", 1)
    assert row == {"id": first.id, "head": first.head, "relation": first.relation, "tail": first.tail,
                   "passage_id": "p1", "sentence_index": first.sentence_index, "text": first.text}
    assert len(KGStore(tmp_path / "empty").to_dataset()) == 0


def test_snapshot_plus_later_log_lines_load_like_the_log(tmp_path):
    store = KGStore(tmp_path)
    fill(store, count=5)
    store.compact()
    fill(store, first=5, count=4)  # appended after the snapshot
    expected = {pid: store.get(pid) for pid in store.passage_ids()}
    again = KGStore(tmp_path)
    assert again._table is not None and len(again._table) == 4  # rows of p0..p4 come from Parquet
    assert {pid: again.get(pid) for pid in again.passage_ids()} == expected
    assert list(again.passage_ids()) == [f"p{i}" for i in range(9)]
    assert list(again.triples()) == [t for pid in again.passage_ids() for t in expected[pid]]
    assert again.to_dataset()["id"] == [t.id for t in again.triples()]
    assert again.stats() == store.stats()


def test_a_snapshot_that_does_not_match_the_log_is_ignored(tmp_path):
    store = KGStore(tmp_path)
    fill(store, count=3)
    store.compact()
    store.log_path.write_text(log_lines(store)[0] + "\n")  # the log replaced by a shorter one
    assert KGStore(tmp_path).passage_ids() == ["p0"]
    (tmp_path / "snapshot" / "meta.json").write_text("{not json")
    assert KGStore(tmp_path).passage_ids() == ["p0"]


def test_a_snapshot_of_a_longer_log_with_the_same_tail_is_ignored(tmp_path):
    store = KGStore(tmp_path)
    fill(store, count=40)  # more than the 4 KiB the snapshot's tail hash covers
    store.compact()
    store.log_path.write_text("".join(line + "\n" for line in log_lines(store)[1:]))  # p0's line removed
    assert KGStore(tmp_path).passage_ids() == [f"p{i}" for i in range(1, 40)]


def test_a_snapshot_is_written_once_the_unsnapshotted_log_reaches_the_compaction_size(tmp_path, monkeypatch):
    entry = ("p0", triples_of("p0", 2), 0)
    size = len(kg_store.record_line(*entry, "llm").encode())
    monkeypatch.setattr(kg_store, "AUTO_COMPACT_BYTES", size + 1)
    KGStore(tmp_path / "below").add_many([entry])
    assert not (tmp_path / "below" / "snapshot").exists()
    monkeypatch.setattr(kg_store, "AUTO_COMPACT_BYTES", size)
    KGStore(tmp_path / "at").add_many([entry])
    assert json.loads((tmp_path / "at" / "snapshot" / "meta.json").read_text())["log_bytes"] == size


def test_a_write_past_the_compaction_size_writes_a_snapshot_and_opening_writes_none(tmp_path, monkeypatch):
    fill(KGStore(tmp_path), count=3)
    monkeypatch.setattr(kg_store, "AUTO_COMPACT_BYTES", 1)
    KGStore(tmp_path)
    assert not (tmp_path / "snapshot").exists()  # a reader writes nothing
    fill(KGStore(tmp_path), first=3, count=1)
    meta = json.loads((tmp_path / "snapshot" / "meta.json").read_text())
    assert meta["log_bytes"] == (tmp_path / "triples.jsonl").stat().st_size and meta["passages"] == 4


def test_a_reader_during_a_write_sees_whole_lines_and_leaves_the_half_written_one_to_its_writer(tmp_path):
    store = KGStore(tmp_path)
    fill(store, count=2)
    line = kg_store.record_line("p2", triples_of("p2", 2), 0, "llm")
    with FileLock(tmp_path / kg_store.LOCK_NAME), open(store.log_path, "a") as f:  # a writer mid-append
        f.write(line[:40])
        f.flush()
        assert KGStore(tmp_path, create=False).passage_ids() == ["p0", "p1"]
        f.write(line[40:])
    assert KGStore(tmp_path).passage_ids() == ["p0", "p1", "p2"]  # nothing of the writer's line was lost


def test_a_writer_waits_while_another_holds_the_store(tmp_path):
    store = KGStore(tmp_path)
    before = store.log_path.exists()
    with FileLock(tmp_path / kg_store.LOCK_NAME):  # another writer (a lock file of its own, as in another process)
        writer = threading.Thread(target=fill, args=(store,), kwargs={"count": 1})
        writer.start()
        writer.join(0.5)
        assert writer.is_alive() and store.log_path.exists() == before
    writer.join(30)
    assert KGStore(tmp_path).passage_ids() == ["p0"]
