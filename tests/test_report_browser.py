"""The report of each real-data warehouse rendered in headless Chromium: nothing
wider than the window (1280 px) and every image loaded. The layout is measured
by a script run in the page (tests/browser/layout_check.js) and read back with
--dump-dom; a page built to fail shows the check can fail."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from judge_bias.report import write_report
from tests.conftest import FAITHFULNESS, SHARED_DATA

pytestmark = [pytest.mark.dbt, pytest.mark.shared]
CHECK = (Path(__file__).parent / "browser" / "layout_check.js").read_text(encoding="utf-8")
CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no headless Chromium: `make test-full` installs Debian's chromium with apt-get "
    "(apt-get update && apt-get install -y chromium); install it to run this test",
)
WAREHOUSES = {
    "alpaca-eval": lambda: sorted((SHARED_DATA / "alpaca_eval").glob("*annotations.json")),
    "llmbar": lambda: [
        SHARED_DATA / "llmbar_natural" / "dataset.json",
        *sorted((SHARED_DATA / "llmbar_natural").glob("*__result.json")),
    ],
    "judge-bench": lambda: [SHARED_DATA / "judge_bench" / "newsroom.json"],
    "self-recognition": lambda: sorted((SHARED_DATA / "self_recognition_xsum").glob("*.json")),
    "play-favorites": lambda: [FAITHFULNESS, SHARED_DATA / "play_favorites" / "prompt_ids.csv"],
}


def layout(html_file: Path, tmp: Path) -> dict:
    """Render ``html_file`` at 1280 x 900 in headless Chromium and return the check's
    JSON (viewport, scroll width, overflowing elements, images, broken images)."""
    page = tmp / f"checked-{html_file.name}"
    text = html_file.read_text(encoding="utf-8")
    page.write_text(text.replace("</body>", f"<script>{CHECK}</script></body>"), encoding="utf-8")
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,900",
         "--virtual-time-budget=10000", "--dump-dom", page.resolve().as_uri()],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    found = re.search(r'<pre id="layout-check">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"chromium gave no layout check (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


@needs_chromium
def test_demo_report_with_every_panel_fits(demo_build, tmp_path: Path) -> None:
    # the demo has every mart, the perturbation table (the widest) included
    report = write_report(demo_build.db_path, tmp_path / "demo.html")
    text = report.read_text(encoding="utf-8")
    assert '<section id="perturbation">' in text
    got = layout(report, tmp_path)
    assert got["images"] == text.count("<img ") > 0 and got["broken"] == []
    assert got["overflowing"] == [] and got["scroll_width"] <= got["viewport"], got


@needs_chromium
def test_demo_report_summary_fits_the_first_screen(demo_build, tmp_path: Path) -> None:
    # issue 33: the verdicts, largest biases and failures above the fold (1280 x 900),
    # the detail sections collapsed (the page was 24,600 px)
    got = layout(write_report(demo_build.db_path, tmp_path / "demo.html"), tmp_path)
    assert got["glance_bottom"] is not None and got["glance_bottom"] <= 900, got
    assert got["page_height"] <= 2500, got


@needs_chromium
def test_failed_build_banner_fits(demo_build, tmp_path: Path) -> None:
    # a failed build's message names long paths: the red banner wraps inside 1280 px
    import json
    import shutil

    from judge_bias.warehouse.provenance import build_record_path

    db = tmp_path / "failed.duckdb"
    shutil.copy(demo_build.db_path, db)
    long_path = "/" + "/".join(f"folder_{i:03d}_without_any_space" for i in range(12))
    record = {
        "state": "failed", "stage": "dbt build", "started_at": "2026-01-01T00:00:00+00:00",
        "data_dir": long_path, "message": f"dbt build failed in model x: {long_path}/x.csv",
    }  # fmt: skip
    build_record_path(db).write_text(json.dumps(record), encoding="utf-8")
    report = write_report(db, tmp_path / "failed.html")
    assert "failed during the stage &#x27;dbt build&#x27;" in report.read_text(encoding="utf-8")
    got = layout(report, tmp_path)
    assert got["overflowing"] == [] and got["scroll_width"] <= got["viewport"], got


@needs_chromium
def test_the_check_can_fail(tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><html><body><table><tr><td style="white-space:nowrap">'
        + "wide " * 800
        + '</td></tr></table><img alt="gone" src="missing.png"></body></html>',
        encoding="utf-8",
    )
    got = layout(page, tmp_path)
    assert got["scroll_width"] > got["viewport"] and got["overflowing"]
    assert got["broken"] == ["gone"]


@needs_chromium
@pytest.mark.parametrize("fmt", sorted(WAREHOUSES))
def test_report_fits_the_window_and_loads_every_image(
    fmt: str, imported_build, tmp_path: Path
) -> None:
    _, result = imported_build(fmt, WAREHOUSES[fmt]())
    report = write_report(result.db_path, tmp_path / f"{fmt}.html")
    n_images = report.read_text(encoding="utf-8").count("<img ")
    got = layout(report, tmp_path)
    assert got["images"] == n_images > 0
    assert got["broken"] == []
    assert got["overflowing"] == [] and got["scroll_width"] <= got["viewport"], got
