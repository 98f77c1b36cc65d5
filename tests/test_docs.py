"""The README and docs/ stay true: every relative link and #anchor resolves, every
`judge-bias <subcommand> --option` and `make <target>` they name exists, every mart is
in the README's table, and the README stays short (hard limit: 400 lines)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from judge_bias.cli import parser

PROJECT = Path(__file__).resolve().parents[1]
README = PROJECT / "README.md"
DOCS = sorted((PROJECT / "docs").glob("*.md"))
PAGES = [README, PROJECT / "CONTRIBUTING.md", *DOCS]
# The target is "under ~400 lines"; this is the hard failure, not a warning.
MAX_README_LINES = 400

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def _text(page: Path) -> str:
    """The page without HTML comments (notes to maintainers, not instructions)."""
    return re.sub(r"<!--.*?-->", "", page.read_text(encoding="utf-8"), flags=re.S)


def _prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return out


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped (hyphens and
    underscores kept), spaces to hyphens."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in _prose_lines(page.read_text(encoding="utf-8")):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def _links(page: Path) -> list[str]:
    return [
        target
        for line in _prose_lines(_text(page))
        for target in LINK.findall(line)
        if not re.match(r"[a-z]+:", target)  # http:, https:, mailto:
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for target in _links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target} (no file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target} (no heading #{anchor})")
    assert not broken, f"{page.name}: broken links: {broken}"


def test_slug_matches_github() -> None:
    assert slug("For BI tools: `warehouse/bi.duckdb`") == "for-bi-tools-warehousebiduckdb"
    assert slug("Tables (schema `main`)") == "tables-schema-main"
    assert slug("Resources: `memory_budget` and the limits of the fits") == (
        "resources-memory_budget-and-the-limits-of-the-fits"
    )


def _code(text: str) -> list[str]:
    """Command-like text: fenced code lines and inline code spans."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if fenced:
            out.append(line.split(" #")[0])
        else:
            out += re.findall(r"`([^`]+)`", line)
    return out


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(p: argparse.ArgumentParser) -> set[str]:
    return {o for a in p._actions for o in a.option_strings}


def cli_mentions(page: Path) -> list[tuple[str, list[str]]]:
    """Each `judge-bias <subcommand> [--option ...]` in the page's code."""
    found = []
    for code in _code(_text(page)):
        for command in re.split(r"&&|\|\||;|\|", code):
            m = re.search(r"(?:^|[\s/])judge-bias((?:\s+--debug)?)\s+([a-z][\w-]*)(.*)", command)
            if m:
                found.append((m.group(2), re.findall(r"(?<![\w-])(--[a-z][\w-]*)", m.group(3))))
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_judge_bias_command_named_exists(page: Path) -> None:
    top = parser()
    subs = _subparsers(top)
    wrong = []
    for sub, opts in cli_mentions(page):
        if sub not in subs:
            wrong.append(f"judge-bias {sub}: no such subcommand ({sorted(subs)})")
            continue
        known = _options(subs[sub]) | _options(top)
        wrong += [f"judge-bias {sub} {o}: no such option" for o in opts if o not in known]
    assert not wrong, f"{page.name}: {wrong}"


def make_targets() -> set[str]:
    text = (PROJECT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z][\w-]*)\s*:(?!=)", text, flags=re.M))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_make_target_named_exists(page: Path) -> None:
    targets = make_targets()
    named = {
        m for code in _code(_text(page)) for m in re.findall(r"(?:^|\s)make\s+([a-z][\w-]*)", code)
    }
    assert named <= targets, f"{page.name}: no Makefile target {sorted(named - targets)}"


def test_the_two_commands_are_the_readme_s() -> None:
    code = "\n".join(_code(_text(README)))
    assert "make demo" in code and "make test" in code
    assert {"demo", "test"} <= make_targets()


def test_readme_is_short() -> None:
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n < MAX_README_LINES, f"README.md has {n} lines; move details to docs/"


def test_every_mart_is_in_the_readme_tables() -> None:
    readme = README.read_text(encoding="utf-8")
    start = readme.index("## Tables")
    tables = readme[start : readme.index("\n## ", start + 1)]
    marts = {
        p.stem for p in (PROJECT / "models" / "marts").rglob("*") if p.suffix in {".sql", ".py"}
    }
    missing = sorted(m for m in marts if f"`{m}`" not in tables)
    assert not missing, f"README Tables does not list: {missing}"


def test_every_docs_page_is_linked() -> None:
    linked = {
        (page.parent / t.partition("#")[0]).resolve()
        for page in PAGES
        for t in _links(page)
        if t.partition("#")[0]
    }
    orphans = sorted(p.name for p in DOCS if p.resolve() not in linked)
    assert not orphans, f"docs pages linked from nowhere: {orphans}"


def test_the_unreleased_changelog_lists_are_tight() -> None:
    """CHANGELOG.md's Unreleased section: a blank line before each ### heading, and
    none between the bullets of its first (the current session's) list, as the file's
    other sections do (session 24 had a stray one before its last bullet, which makes
    the list a loose one in CommonMark, and none before the next heading)."""
    text = (PROJECT / "CHANGELOG.md").read_text(encoding="utf-8")
    start = text.index("## Unreleased\n")
    lines = text[start : text.index("\n## ", start + 1)].splitlines()
    headings = [i for i, line in enumerate(lines) if line.startswith("### ")]
    for i in headings:
        assert lines[i - 1] == "", f"no blank line before {lines[i]!r}"
    first = lines[headings[0] + 1 : headings[1] - 1]
    assert first[0].startswith("- ") and "" not in first, "a blank line inside the first list"
