"""The two test tiers (tests/conftest.py FULL_TIER): `make test` runs the quick tier
without the Spark route or Chromium installed, `make test-full` the rest."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import FULL_TIER, tier_of

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
MODULES = sorted(p.stem for p in TESTS.glob("test_*.py"))
# what only `make test-full` installs (the Makefile's test-full prerequisites)
NEEDS_FULL = re.compile(
    r"^\s*(import|from) pyspark|find_spec\(\"pyspark|\bspark_route\b|which\(\"chromium|"
    r"\"chromium\"|engine=\"spark\"",
    re.M,
)


def test_every_full_tier_name_is_a_test_module():
    assert sorted(FULL_TIER - set(MODULES)) == []


def test_quick_tier_needs_neither_spark_nor_chromium():
    """`make test` does not install pyspark or Chromium: no quick-tier module uses them."""
    quick = [m for m in MODULES if tier_of(f"tests/{m}.py::t") == "quick" and m != "test_tiers"]
    uses = [m for m in quick if NEEDS_FULL.search((TESTS / f"{m}.py").read_text(encoding="utf-8"))]
    assert uses == [], f"quick-tier modules that need `make test-full`'s installs: {uses}"


def test_make_test_runs_the_quick_tier_and_ci_runs_both():
    makefile = (PROJECT / "Makefile").read_text(encoding="utf-8")
    test, full = (re.search(rf"^{t}:(.*)\n\t(.*)$", makefile, re.M) for t in ("test", "test-full"))
    assert test and full
    assert "pyspark" not in test.group(1) and "chromium" not in test.group(1)
    assert "pyspark" in full.group(1) and "chromium" in full.group(1)
    assert test.group(2) == "$(call pytest_tier,quick,,)"
    assert full.group(2).startswith("$(call pytest_tier,full,")
    ci = (PROJECT / ".ci" / "run").read_text(encoding="utf-8")
    for target in ("test", "test-full"):
        assert re.search(rf"^time make {target} \|\|", ci, re.M), target
