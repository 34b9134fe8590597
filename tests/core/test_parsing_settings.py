"""jsonargparse's settings are set where a parser is built, never by importing a module: in a fresh process,
importing the project's modules leaves a plain parser as it was, and `argument_parser` shows a config field's
attribute docstring in `--help`."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CONFIG = '''
from dataclasses import dataclass

@dataclass
class Config:
    size: int = 1
    """the size docstring"""
'''

CHECK = '''
import jsonargparse
import core.cli, core.config, evaluation.config  # the parsers' modules, imported
from settings_config import Config

def shows_docstring(parser):
    parser.add_class_arguments(Config, "config")
    return "the size docstring" in parser.format_help()

print(shows_docstring(jsonargparse.ArgumentParser()), shows_docstring(core.cli.argument_parser()))
'''


def test_importing_sets_nothing_and_argument_parser_shows_field_docstrings(tmp_path):
    (tmp_path / "settings_config.py").write_text(CONFIG)
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env={"PYTHONPATH": f"{ROOT}:{tmp_path}", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]
