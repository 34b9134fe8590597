"""What a user sees when something goes wrong: one line saying what and how to fix it, a traceback
only with MHR_DEBUG; models that cannot be had offline say what works; LLM output parses in linear time."""

import os
import signal
import time

import huggingface_hub.constants
import pytest

from core.cli import exit_code
from inference.mind import parse_entities
from models.encoder import Encoder, EncoderConfig
from models.packaged import ModelNotFoundError


def test_an_unexpected_error_is_one_line_with_a_hint(capsys, monkeypatch):
    monkeypatch.delenv("MHR_DEBUG", raising=False)

    def fails():
        raise RuntimeError("the GPU fell over\nwith a second line")

    assert exit_code(fails) == 1
    assert capsys.readouterr().err == ("error: the GPU fell over with a second line "
                                       "(RuntimeError; set MHR_DEBUG=1 for the traceback)\n")
    monkeypatch.setenv("MHR_DEBUG", "1")
    with pytest.raises(RuntimeError, match="GPU fell over"):
        exit_code(fails)


def test_bad_input_exits_2_and_an_interrupt_130(capsys, monkeypatch):
    monkeypatch.delenv("MHR_DEBUG", raising=False)
    assert exit_code(lambda: (_ for _ in ()).throw(KeyError("passages"))) == 2
    assert capsys.readouterr().err == "error: passages\n"

    def interrupted():
        raise KeyboardInterrupt

    assert exit_code(interrupted) == 130
    assert "the same command resumes" in capsys.readouterr().err


def test_sigterm_stops_like_an_interrupt_and_runs_finally_blocks(capsys):
    cleaned = []

    def terminated():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises before this ends
        finally:
            cleaned.append(True)

    before = signal.getsignal(signal.SIGTERM)
    assert exit_code(terminated) == 130 and cleaned == [True]
    assert "the same command resumes" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is before  # the previous handler is back


def test_a_model_that_is_neither_local_nor_reachable_says_what_works_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)  # read at import: patch it too
    with pytest.raises(ModelNotFoundError, match=r"model 'someorg/no-such-model' is not a local folder and could not "
                                                  r"be fetched \(HF_HUB_OFFLINE is set\); what works offline: .*'minilm'"):
        Encoder(EncoderConfig("someorg/no-such-model"))


def test_entity_lines_parse_in_linear_time():
    # A 100,000-character line with inner spaces: the earlier backtracking pattern took ~5.7 s at 40,000
    # characters on this project's machine and grows with the square; a linear parse takes milliseconds.
    line = "Ana" + " " * 100_000 + "Corvel"
    start = time.perf_counter()
    assert parse_entities(line) == [(line, 0, len(line))]
    assert time.perf_counter() - start < 2.0
    assert parse_entities(" 1. Ana Corvel ;\n- Drusk.\n\n2) ana corvel") == [("Ana Corvel", 4, 14), ("Drusk", 19, 24)]
