"""Reading files that are not clean UTF-8 text, whole-file writes, output locks and settings records."""

import json
import multiprocessing
import os

import pytest

from core.config import ConfigError, dataclass_from, require_positive
from core.records import (
    DataError,
    OutputBusyError,
    append_log,
    check_settings,
    content_digest,
    exclusive_output,
    log_digest,
    log_extends,
    log_records,
    read_json,
    read_records,
    split_held_out,
    write_atomic,
)


def test_a_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "q.json"
    path.write_bytes('\ufeff[{"x": 1}]'.encode())
    assert read_records(path) == [("record 0", {"x": 1})]
    path.write_bytes('\ufeff{"x": 1}\n{"x": 2}\n'.encode())
    assert read_records(path) == [("line 1", {"x": 1}), ("line 2", {"x": 2})]


def test_a_byte_that_is_not_utf8_names_the_file_line_and_offset(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_bytes(b'{"x": "ok"}\n{"x": "caf\xe9"}\n')
    with pytest.raises(DataError, match=r"q\.jsonl: line 2: not UTF-8 text: byte 0xe9 at offset 22"):
        read_records(path)


@pytest.mark.parametrize("text, where", [
    ('{"x": "ok"}\n{"title": "\\ud800"}\n', r"line 2, field 'title'"),
    ('[{"x": 1}, {"text": "a\\udc00b"}]', r"record 1, field 'text'"),
    ('{"docs": [{"y": "\\udbff"}]}', r"key 'docs'"),
])
def test_a_lone_surrogate_escape_names_the_file_record_and_field(tmp_path, text, where):
    path = tmp_path / "data.json"
    path.write_text(text)
    with pytest.raises(DataError, match=rf"data\.json: {where}: holds the escape \\u[0-9a-f]{{4}}, a lone surrogate"):
        read_json(path)


def test_write_atomic_replaces_whole_or_not_at_all(tmp_path, monkeypatch):
    path = tmp_path / "metrics.json"
    write_atomic(path, "old\n")
    monkeypatch.setattr("os.replace", lambda *a: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError, match="disk full"):
        write_atomic(path, "new\n")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"]  # no temporary file left behind


def test_write_atomic_syncs_the_file_before_renaming_it_over_the_old_one(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
                        or real_fsync(fd))
    monkeypatch.setattr(os, "replace", lambda src, dst: events.append(("replace", str(src))) or real_replace(src, dst))
    write_atomic(tmp_path / "metrics.json", "new\n")
    (_, synced), (_, renamed) = events
    assert [e for e, _ in events] == ["fsync", "replace"] and synced == renamed  # the temporary file, then its rename
    assert (tmp_path / "metrics.json").read_text() == "new\n"


def hold_lock(folder, ready, release):
    with exclusive_output(folder, is_folder=True):
        ready.set()
        release.wait(30)


def test_a_second_writer_of_an_output_is_refused_while_the_first_holds_it(tmp_path):
    context = multiprocessing.get_context("spawn")
    ready, release = context.Event(), context.Event()
    holder = context.Process(target=hold_lock, args=(tmp_path / "out", ready, release))
    holder.start()
    try:
        assert ready.wait(60)
        with pytest.raises(OutputBusyError, match="another run is writing to .*out"):
            with exclusive_output(tmp_path / "out", is_folder=True):
                pass
    finally:
        release.set()
        holder.join(30)
    with exclusive_output(tmp_path / "out", is_folder=True):  # free again once the holder is gone
        pass


def test_an_output_folder_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "out").write_text("x")
    with pytest.raises(NotADirectoryError, match="is a file, not a folder"):
        with exclusive_output(tmp_path / "out", is_folder=True):
            pass


def test_check_settings_refuses_other_settings_and_unknown_outputs(tmp_path):
    output, record = tmp_path / "chains.jsonl", tmp_path / "chains.run.json"
    check_settings(record, {"k0": 10}, output, overwrite=False)  # nothing there yet
    output.write_text("{}\n")
    with pytest.raises(ValueError, match="was not made by this command"):
        check_settings(record, {"k0": 10}, output, overwrite=False)
    record.write_text(json.dumps({"k0": 10, "seed": 0}))
    check_settings(record, {"k0": 10, "seed": 0}, output, overwrite=False)
    with pytest.raises(ValueError, match=r"other settings \(k0 differ"):
        check_settings(record, {"k0": 3, "seed": 0}, output, overwrite=False)
    check_settings(record, {"k0": 3, "seed": 0}, output, overwrite=True)
    record.write_text("{not json")
    with pytest.raises(DataError, match="chains.run.json: malformed settings record"):
        check_settings(record, {"k0": 10}, output, overwrite=False)


def test_a_nested_setting_out_of_range_names_its_full_key():
    from dataclasses import dataclass, field

    @dataclass
    class Inner:
        k0: int = 10

        def __post_init__(self):
            require_positive(self, "k0")

    @dataclass
    class Outer:
        kirag: Inner = field(default_factory=Inner)

    with pytest.raises(ConfigError, match="^kirag.k0 must be at least 1, got 0$"):
        dataclass_from(Outer, {"kirag": {"k0": 0}})


def test_a_paired_surrogate_escape_is_text(tmp_path):
    path = tmp_path / "q.json"
    path.write_text('[{"x": "smile \\ud83d\\ude00"}]')
    assert read_records(path) == [("record 0", {"x": "smile \U0001F600"})]


def test_log_records_leave_out_a_partial_line_without_writing_and_name_a_malformed_one(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2}\n{"a": 3')  # a kill in the middle of the last line
    assert log_records(path) == [("line 1", {"a": 1}), ("line 3", {"a": 2})]
    assert path.read_text() == '{"a": 1}\n\n{"a": 2}\n{"a": 3'  # a reader writes nothing
    path.write_text('{"a": 1}\n{oops}\n')
    with pytest.raises(DataError, match=r"log\.jsonl: line 2: malformed JSON"):
        log_records(path)
    assert log_records(tmp_path / "none.jsonl") == []


def test_a_last_record_without_its_newline_is_read_and_kept(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}')  # whole, only its newline missing (a hand edit)
    assert log_records(path) == [("line 1", {"a": 1}), ("line 2", {"a": 2})]
    assert path.read_text() == '{"a": 1}\n{"a": 2}'
    with append_log(path) as f:  # the writer ends it with its newline before appending
        f.write('{"a": 3}\n')
    assert [r for _, r in log_records(path)] == [{"a": 1}, {"a": 2}, {"a": 3}]


def test_the_writer_cuts_off_a_partial_line_before_appending(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text('{"a": 1}\n{"a": ')
    with append_log(path) as f:
        f.write('{"a": 2}\n')
    assert path.read_text() == '{"a": 1}\n{"a": 2}\n'


def test_a_log_digest_holds_while_the_log_only_grows(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}\n{"a": ')  # a partial line is not digested
    digest = log_digest(path)
    assert digest.startswith("18:") and log_extends(path, digest)
    path.write_text('{"a": 1}\n{"a": 2}\n{"a": 3}\n')
    assert log_extends(path, digest)
    path.write_text('{"a": 1}\n{"a": 9}\n{"a": 3}\n')
    assert not log_extends(path, digest)
    path.write_text('{"a": 1}\n')
    assert not log_extends(path, digest)


def test_content_digest_follows_bytes_and_names_not_paths_or_hidden_files(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        (folder / "sub").mkdir(parents=True)
        (folder / "weights.bin").write_bytes(b"\x00\x01")
        (folder / "sub" / "config.json").write_text("{}")
    assert content_digest(a) == content_digest(b)  # where a folder is does not matter
    (a / ".lock").write_text("")
    (a / ".cache").mkdir()
    (a / ".cache" / "x").write_text("y")
    assert content_digest(a) == content_digest(b)  # nor its hidden files
    (a / "weights.bin").write_bytes(b"\x00\x02")
    assert content_digest(a) != content_digest(b)
    (a / "weights.bin").write_bytes(b"\x00\x01")
    (a / "sub" / "config.json").rename(a / "sub" / "other.json")
    assert content_digest(a) != content_digest(b)  # a renamed file is another folder
    assert content_digest(a / "weights.bin") == content_digest(b / "weights.bin") != content_digest(a / "sub" / "other.json")


def test_a_held_out_share_below_one_never_holds_out_every_record():
    assert split_held_out(["a"], 0.1, seed=0) == (["a"], [])  # one record: it trains, and nothing validates
    train, held_out = split_held_out(["a", "b"], 0.9, seed=0)
    assert len(train) == len(held_out) == 1 and sorted(train + held_out) == ["a", "b"]
    assert split_held_out(["a", "b"], 1.0, seed=0) == ([], ["a", "b"])  # a test set only
    assert split_held_out(["a", "b", "c"], 0.0, seed=0) == (["a", "b", "c"], [])
