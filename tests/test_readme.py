"""The README stays a short entry point: its two set-up commands are the ones CI runs, and no link of it or
of docs/ points at a missing file."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
MAX_LINES = 150

FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")


def setup_commands(text: str) -> list[str]:
    """The commands of the first code block under the "Set up" heading, comments dropped."""
    section = re.search(r"^## Set up.*?$(.*?)(?=^## )", text, re.S | re.M)
    assert section, "README.md has no '## Set up ...' section"
    block = re.search(r"^```[a-z]*\n(.*?)^```", section.group(1), re.S | re.M)
    assert block, "the set-up section has no code block"
    lines = (line.split("#", 1)[0].strip() for line in block.group(1).splitlines())
    return [line for line in lines if line]


def relative_links(text: str) -> list[str]:
    """Link targets outside code, without web addresses or in-page anchors, their own anchors cut off."""
    prose = CODE_SPAN.sub("", FENCE.sub("", text))
    targets = (target.split("#", 1)[0] for target in LINK.findall(prose))
    return [t for t in targets if t and not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def test_readme_is_short():
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"README.md has {lines} lines; move detail to docs/ (at most {MAX_LINES})"


def test_setup_block_holds_exactly_the_two_commands():
    assert setup_commands(README.read_text(encoding="utf-8")) == ["make demo", "make test"]


def test_ci_runs_the_readme_test_command():
    commands = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    assert "make test" in commands


def test_readme_links_every_docs_page():
    assert DOCS, "docs/ holds no page"
    linked = {(README.parent / t).resolve() for t in relative_links(README.read_text(encoding="utf-8"))}
    assert [p.name for p in DOCS if p.resolve() not in linked] == []


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_point_at_files(page):
    missing = [t for t in relative_links(page.read_text(encoding="utf-8")) if not (page.parent / t).exists()]
    assert missing == [], f"{page.relative_to(ROOT)} links to missing files"


def test_link_finder_sees_links_and_skips_code():
    text = "[a](docs/x.md#part) [web](https://example.org) [top](#top)\n`[b](in/code.md)`\n```\n[c](fenced.md)\n```\n"
    assert relative_links(text) == ["docs/x.md"]
