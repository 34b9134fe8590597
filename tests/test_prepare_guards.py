"""prepare.py never mixes the outputs of two settings: chains files and unified data folders keep the
settings that made them, and refuse others unless told to overwrite; chains lines are fsynced."""

import json
import os

from core.chains import read_chains
from prepare import main

DEMO_CHAINS = ["chains", "--config", "configs/chains/demo.yaml", "--report", "false"]


def chains_args(tmp_path, *flags):
    return DEMO_CHAINS + ["--output", str(tmp_path / "chains.jsonl"), "--index_cache_dir", str(tmp_path / "idx"),
                          "--data.limit", "6", *flags]


def test_chains_with_other_settings_are_refused_then_replaced_on_request(tmp_path, capsys, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    assert main(chains_args(tmp_path)) == 0
    assert len(synced) >= 6  # one fsync per question written, at least
    first = (tmp_path / "chains.jsonl").read_bytes()
    assert json.loads((tmp_path / "chains.run.json").read_text())["k0"] == 10
    capsys.readouterr()
    assert main(chains_args(tmp_path, "--k0", "2")) == 2
    assert "made with other settings (k0 differ" in capsys.readouterr().err
    assert (tmp_path / "chains.jsonl").read_bytes() == first
    assert main(chains_args(tmp_path, "--k0", "2", "--overwrite", "true")) == 0
    assert json.loads((tmp_path / "chains.run.json").read_text())["k0"] == 2
    assert len(read_chains(tmp_path / "chains.jsonl")) == 6
    assert main(chains_args(tmp_path, "--k0", "2", "--data.limit", "8")) == 0  # more questions, same settings
    assert len(read_chains(tmp_path / "chains.jsonl")) == 8


def test_chains_without_a_settings_record_are_not_added_to(tmp_path, capsys):
    (tmp_path / "chains.jsonl").write_text('{"question_id": "x"}\n')
    assert main(chains_args(tmp_path)) == 2
    assert "was not made by this command" in capsys.readouterr().err


def test_chains_settings_out_of_range_are_refused(tmp_path, capsys):
    assert main(chains_args(tmp_path, "--k0", "0")) == 2
    assert capsys.readouterr().err.strip() == "error: k0 must be at least 1, got 0"
    assert main(chains_args(tmp_path, "--max_negatives", "0")) == 2
    assert not (tmp_path / "chains.jsonl").exists()


def test_a_mistyped_kg_store_for_chains_is_an_error_not_an_empty_store(tmp_path, capsys):
    assert main(chains_args(tmp_path, "--kg_store", str(tmp_path / "typo"))) == 2
    assert "KG store" in capsys.readouterr().err and not (tmp_path / "typo").exists()


def test_a_unified_data_folder_keeps_its_settings(tmp_path, capsys):
    out = tmp_path / "unified"
    args = ["data", "--data.format", "unified", "--output_dir", str(out)]
    assert main(args + ["--data.limit", "3"]) == 0
    assert len((out / "questions.jsonl").read_text().splitlines()) == 3
    assert main(args + ["--data.limit", "3"]) == 0
    capsys.readouterr()  # the same settings: written again, identically
    assert main(args + ["--data.limit", "4"]) == 2
    assert "made with other settings (limit differ" in capsys.readouterr().err
    assert len((out / "questions.jsonl").read_text().splitlines()) == 3
    assert main(args + ["--data.limit", "4", "--overwrite", "true"]) == 0
    assert len((out / "questions.jsonl").read_text().splitlines()) == 4
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    assert main(["data", "--data.format", "unified", "--output_dir", str(other)]) == 2
    assert "was not made by this command" in capsys.readouterr().err


def test_an_unknown_flag_is_one_line(capsys):
    assert main(["chains", "--k00", "3"]) == 2
    assert capsys.readouterr().err.strip() == "error: unrecognized arguments: --k00 3"
