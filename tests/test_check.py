"""`judge-bias check` on the demo warehouse (the session's demo build, GLMs off):
exit 0 with the permissive default policy, 3 with a finding (the demo's planted
self-bias of 0.15 for aurora-large and family-bias of 0.10 for Aurora, truth.csv; a
claimed model order against the planted qualities), 2 for a bad policy; JUnit XML
whose counts are the findings; the drift and stability rules on synthetic
judge_drift / judge_stability tables with the columns agreed with the drift branch
(docs/check.md)."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import duckdb
import pytest

from judge_bias.checks.settings import EXIT_FINDINGS
from judge_bias.cli import main
from judge_bias.warehouse.build import BuildResult

pytestmark = [pytest.mark.dbt]


@pytest.fixture(scope="module")
def db(demo_build: BuildResult) -> Path:
    return Path(demo_build.db_path)


@pytest.fixture
def scratch(db: Path, tmp_path: Path) -> Path:
    """A copy of the demo warehouse a test may add tables to."""
    copy = tmp_path / "demo.duckdb"
    shutil.copy(db, copy)
    return copy


def _policy(tmp_path: Path, text: str) -> str:
    path = tmp_path / "policy.yml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_default_policy_passes_the_demo(db: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["check", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "0 finding(s)" in out and "FINDING" not in out


def test_planted_self_and_family_bias_are_findings(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    policy = _policy(
        tmp_path,
        "judges: [aurora-large, borealis-pro]\n"
        "rules:\n  self_bias: {max: 0.05}\n  family_bias: {max: 0.05}\n",
    )
    junit = tmp_path / "out" / "check.xml"
    assert main(["check", "--db", str(db), "--policy", policy, "--junit", str(junit)]) == 3
    assert EXIT_FINDINGS == 3
    lines = capsys.readouterr().out.splitlines()
    findings = [x for x in lines if x.startswith("FINDING")]
    # planted: self 0.15 for aurora-large, 0.0 for borealis-pro; family 0.10 for Aurora
    own = [x for x in findings if x.startswith("FINDING self_bias aurora-large: estimate ")]
    assert len(own) == 1 and float(own[0].split("estimate ")[1].split()[0]) > 0.05
    assert any(x.startswith("FINDING family_bias Aurora: estimate") for x in findings)
    assert not any("borealis-pro" in x or "Borealis" in x for x in findings)
    assert all("significant" in x and "[" in x for x in findings)  # with its numbers
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert int(suite.get("failures", "-1")) == len(findings)
    assert int(suite.get("tests", "0")) == 4  # 2 judges' self terms + 2 families
    failed = {c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None}
    assert failed == {"aurora-large", "Aurora"}


def test_warning_severity_reports_without_failing(db: Path, tmp_path: Path) -> None:
    policy = _policy(tmp_path, "rules:\n  self_bias: {max: 0.05, severity: warning}\n")
    assert main(["check", "--db", str(db), "--policy", policy]) == 0


def test_comparisons_against_the_planted_qualities(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Planted mean qualities: aurora-large 0.70, aurora-small 0.52, borealis-pro 0.66.
    The true order passes; the reversed order and a minimum difference larger than
    the planted gap are findings."""
    policy = _policy(
        tmp_path,
        "rules:\n  comparisons:\n"
        "    - {better: aurora-large, worse: aurora-small, adjustment: holm}\n"
        "    - {better: aurora-small, worse: aurora-large}\n"
        "    - {better: aurora-large, worse: aurora-small, min_difference: 0.4}\n",
    )
    assert main(["check", "--db", str(db), "--policy", policy, "--verbose"]) == 3
    lines = capsys.readouterr().out.splitlines()
    assert any(x.startswith("PASSED comparisons aurora-large > aurora-small") for x in lines)
    findings = [x for x in lines if x.startswith("FINDING comparisons")]
    assert len(findings) == 2
    assert any("aurora-small > aurora-large" in x and "difference -0.1" in x for x in findings)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rules:\n  self_bias: {maximum: 0.1}\n", "unknown option 'maximum'"),
        ("rules:\n  no_such_rule: {}\n", "unknown rule 'no_such_rule'"),
        ("rules: [self_bias\n", "not valid YAML"),
        ("rules:\n  self_bias: {max: high}\n", "wrong type"),
        ("rules:\n  comparisons:\n    - {better: a}\n", "needs `better` and `worse`"),
    ],
)
def test_bad_policy_is_a_usage_error(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture, text: str, message: str
) -> None:
    assert main(["check", "--db", str(db), "--policy", _policy(tmp_path, text)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_missing_marts_are_skipped_not_passed(db: Path, tmp_path: Path, capsys) -> None:
    """Without judge_drift / judge_stability (or an accuracy column) the rules say so."""
    policy = _policy(
        tmp_path, "rules:\n  drift: {}\n  flip_rate: {max: 0.05}\n  accuracy: {min: 0.7}\n"
    )
    con = duckdb.connect(str(db), read_only=True)
    tables = {r[0] for r in con.execute("show tables").fetchall()}
    con.close()
    code = main(["check", "--db", str(db), "--policy", policy])
    out = capsys.readouterr().out
    if "judge_drift" not in tables:
        assert "SKIPPED drift -: table judge_drift is not in this warehouse" in out
    if "judge_stability" not in tables:
        assert "SKIPPED flip_rate -: table judge_stability is not in this warehouse" in out
        assert code == 0


def test_drift_and_flip_rate_on_synthetic_marts(
    scratch: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """judge_drift and judge_stability with the agreed columns: a flagged version pair
    and a flip rate above the bound are findings, the others pass."""
    con = duckdb.connect(str(scratch))
    con.execute("drop table if exists judge_drift; drop table if exists judge_stability")
    con.execute(
        "create table judge_drift as select * from (values "
        "('j-v1', 'j-v2', 'all', true, 'shift', 0.12, 0.08, 0.16, 0.20), "
        "('k-v1', 'k-v2', 'all', false, null, 0.01, -0.02, 0.04, 0.02), "
        "('j-v1', 'j-v2', 'correctness', true, 'flips', 0.3, 0.2, 0.4, 0.5)) as t("
        "judge_before, judge_after, dimension, drift_flag, drift_reasons, mean_shift, "
        "mean_shift_ci_low, mean_shift_ci_high, pass_flip_rate)"
    )
    con.execute(
        "create table judge_stability as select * from (values "
        "('j-v2', 'all', 0.12, 0.08, 0.16), ('k-v2', 'all', 0.01, 0.0, 0.03)) "
        "as t(judge, dimension, flip_rate, flip_rate_ci_low, flip_rate_ci_high)"
    )
    con.close()
    policy = _policy(tmp_path, "rules:\n  drift: {}\n  flip_rate: {max: 0.05}\n")
    assert main(["check", "--db", str(scratch), "--policy", policy, "--verbose"]) == 3
    lines = capsys.readouterr().out.splitlines()
    assert (
        "FINDING drift j-v1 -> j-v2: drift_flag true, reasons shift, mean_shift 0.120 "
        "[0.080, 0.160], pass_flip_rate 0.200" in lines
    )
    assert (
        "PASSED drift k-v1 -> k-v2: drift_flag false, mean_shift 0.010 [-0.020, 0.040], "
        "pass_flip_rate 0.020" in lines
    )
    assert "FINDING flip_rate j-v2: flip_rate 0.120, max 0.05" in lines
    assert "PASSED flip_rate k-v2: flip_rate 0.010, max 0.05" in lines
    assert sum(x.startswith("FINDING") for x in lines) == 2  # the dimension row is not read


def test_accuracy_on_a_synthetic_agreement_binary(
    scratch: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """agreement_binary (the drift branch's mart) with accuracy_ci_high: below 0.7 is a
    finding; a null accuracy is skipped for that judge, not passed."""
    con = duckdb.connect(str(scratch))
    con.execute("drop table if exists agreement_binary")
    con.execute(
        "create table agreement_binary as select * from (values "
        "('j', 'all', 0.62, 0.55, 0.68), ('k', 'all', 0.90, 0.85, 0.93), "
        "('m', 'all', null, null, null), ('j', 'correctness', 0.1, 0.05, 0.2)) "
        "as t(judge, dimension, accuracy, accuracy_ci_low, accuracy_ci_high)"
    )
    con.close()
    policy = _policy(tmp_path, "rules:\n  accuracy: {min: 0.7}\n")
    assert main(["check", "--db", str(scratch), "--policy", policy, "--verbose"]) == 3
    lines = capsys.readouterr().out.splitlines()
    assert "FINDING accuracy j: accuracy_ci_high 0.680, min 0.7" in lines
    assert "PASSED accuracy k: accuracy_ci_high 0.930, min 0.7" in lines
    assert "SKIPPED accuracy m: accuracy_ci_high is null" in lines
