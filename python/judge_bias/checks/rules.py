"""The rules of `judge-bias check`, one registered function each (``@rule``): it reads
its mart from the warehouse and returns one ``Result`` per subject it judged (a judge,
a family, a model pair): passed, failed (a finding) or skipped (its mart, column or
value is absent: said, never a silent pass). A new rule is one function here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import duckdb
import pandas as pd

from judge_bias.checks import settings as s
from judge_bias.checks.policy import Policy, check_options
from judge_bias.errors import InputError

NUMBER = (int, float)


@dataclass(frozen=True)
class Result:
    rule: str
    subject: str
    status: str  # passed, failed, skipped
    message: str
    severity: str = "error"

    @property
    def is_finding(self) -> bool:
        return self.status == "failed" and self.severity == "error"

    def line(self) -> str:
        tag = {"failed": "FINDING" if self.severity == "error" else "WARNING"}.get(
            self.status, self.status.upper()
        )
        return f"{tag} {self.rule} {self.subject}: {self.message}"


@dataclass(frozen=True)
class RuleSpec:
    name: str
    options: dict[str, type | tuple[type, ...]]
    evaluate: Callable[[duckdb.DuckDBPyConnection, dict[str, Any], Policy], list[Result]]

    def validate(self, options: object, where: str) -> None:
        opts = check_options(options, where, self.options)
        for item in opts.get("items", []):
            check_options(item, f"{where} item", COMPARISON_ITEM)
            for key in ("better", "worse"):
                if key not in item:
                    raise InputError(f"{where}: each pair needs `better` and `worse`")


RULES: dict[str, RuleSpec] = {}


def rule(name: str, **options: type | tuple[type, ...]) -> Callable:
    def register(fn: Callable) -> Callable:
        RULES[name] = RuleSpec(name, options, fn)
        return fn

    return register


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str] | None:
    rows = con.execute(
        "select column_name from information_schema.columns "
        "where table_schema = 'main' and table_name = ? order by ordinal_position",
        [table],
    ).fetchall()
    return [r[0] for r in rows] or None


def _read(
    con: duckdb.DuckDBPyConnection,
    name: str,
    table: str,
    needed: list[str],
    equal: dict[str, str] | None = None,
) -> pd.DataFrame | Result:
    """The rows of ``table`` whose columns equal ``equal``'s values (a column the table
    lacks is not filtered on), or a skipped Result saying what is missing. Values are
    bound as parameters: a policy's text never becomes SQL."""
    cols = _columns(con, table)
    if cols is None:
        return Result(name, "-", "skipped", f"table {table} is not in this warehouse")
    absent = [c for c in needed if c not in cols]
    if absent:
        return Result(name, "-", "skipped", f"{table} has no column {', '.join(absent)}")
    filters = {k: v for k, v in (equal or {}).items() if k in cols}
    where = " and ".join(f'"{k}" = ?' for k in filters)
    sql = f'select * from "{table}"' + (f" where {where}" if where else "")
    return con.execute(sql, list(filters.values())).df()


def _fmt(x: object) -> str:
    return "null" if x is None or x != x else f"{float(x):.3f}"  # type: ignore[arg-type]


def _severity(options: dict[str, Any]) -> str:
    return str(options.get("severity", "error"))


def _bias(con, options, policy, name: str, term: str) -> list[Result]:
    limit = float(options.get("max", 0.05))
    analysis = str(options.get("analysis", "main"))
    needed = ["term_type", "analysis", "slice", "estimate", "ci_low", "ci_high", "significant"]
    filters = {"term_type": term, "analysis": analysis, "slice": "all"}
    frame = _read(con, name, s.BIAS_MART, needed, filters)
    if isinstance(frame, Result):
        return [frame]
    subject = "judge" if term == "self" else "family"
    if policy.judges:
        if term == "self":
            frame = frame[frame["judge"].isin(policy.judges)]
        else:
            fams = con.execute(
                "select distinct judge_family from fct_judge_ratings where judge in "
                f"({', '.join('?' for _ in policy.judges)})",
                list(policy.judges),
            ).fetchall()
            frame = frame[frame["family"].isin([f[0] for f in fams])]
    if frame.empty:
        return [Result(name, "-", "skipped", f"no {term} term in {analysis} for these judges")]
    out = []
    for _, r in frame.iterrows():
        level = r.get("ci_level", float("nan"))
        text = (f"estimate {_fmt(r['estimate'])} [{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}] "
                f"at {_fmt(level)}, {'significant' if r['significant'] else 'not significant'}, "
                f"max {limit:g}")  # fmt: skip
        if r["estimate"] != r["estimate"]:
            out.append(Result(name, str(r[subject]), "skipped", "no estimate", _severity(options)))
            continue
        failed = bool(r["significant"]) and float(r["estimate"]) > limit
        out.append(Result(name, str(r[subject]), "failed" if failed else "passed", text,
                          _severity(options)))  # fmt: skip
    return out


@rule("self_bias", max=NUMBER, analysis=str)
def self_bias(con, options, policy) -> list[Result]:
    """A finding per judge whose self-bias (bias_estimates, analysis `main` by default,
    slice all) is significant and above ``max`` (default 0.05)."""
    return _bias(con, options, policy, "self_bias", "self")


@rule("family_bias", max=NUMBER, analysis=str)
def family_bias(con, options, policy) -> list[Result]:
    """A finding per family (of the policy's judges) whose family-bias is significant
    and above ``max`` (default 0.05)."""
    return _bias(con, options, policy, "family_bias", "family")


def _threshold(
    con, options, policy, name: str, table: str, judge_col: str, column: str,
    bound: str, default: float, filters: dict[str, str],
) -> list[Result]:  # fmt: skip
    """One result per judge: ``column`` of ``table`` against ``bound`` (min or max)."""
    limit = float(options.get(bound, default))
    column = str(options.get("column", column))
    frame = _read(con, name, table, [judge_col, column], filters)
    if isinstance(frame, Result):
        return [frame]
    if policy.judges:
        frame = frame[frame[judge_col].isin(policy.judges)]
    if frame.empty:
        return [Result(name, "-", "skipped", f"{table} has no row for these judges")]
    out = []
    for _, r in frame.iterrows():
        value = r[column]
        subject = str(r[judge_col])
        if value is None or value != value:
            out.append(Result(name, subject, "skipped", f"{column} is null", _severity(options)))
            continue
        failed = float(value) < limit if bound == "min" else float(value) > limit
        text = f"{column} {_fmt(value)}, {bound} {limit:g}"
        out.append(Result(name, subject, "failed" if failed else "passed", text,
                          _severity(options)))  # fmt: skip
    return out


@rule("accuracy", min=NUMBER, column=str, dimension=str, mart=str)
def accuracy(con, options, policy) -> list[Result]:
    """A finding per judge whose pass/fail accuracy against the human labels
    (agreement_binary, column ``accuracy_ci_high`` by default: its upper bound) is below
    ``min`` (0.7). ``mart`` and ``column`` point it elsewhere (e.g. agreement_judge_human,
    spearman_ci_high)."""
    dim = str(options.get("dimension", "all"))
    mart = str(options.get("mart", s.AGREEMENT_MART))
    return _threshold(con, options, policy, "accuracy", mart, "judge",
                      s.ACCURACY_COLUMN, "min", 0.7, {"dimension": dim})  # fmt: skip


@rule("position_consistency", min=NUMBER, column=str)
def position_consistency(con, options, policy) -> list[Result]:
    """A finding per judge whose pairwise position consistency (pairwise_bias, against
    every opponent) is below ``min`` (0.8)."""
    return _threshold(con, options, policy, "position_consistency", s.PAIRWISE_MART, "judge",
                      s.POSITION_COLUMN, "min", 0.8, {"opponent": "all"})  # fmt: skip


@rule("flip_rate", max=NUMBER, column=str, dimension=str)
def flip_rate(con, options, policy) -> list[Result]:
    """A finding per judge whose rerun flip rate (judge_stability) is above ``max``
    (0.05)."""
    dim = str(options.get("dimension", "all"))
    return _threshold(con, options, policy, "flip_rate", s.STABILITY_MART, "judge",
                      s.FLIP_COLUMN, "max", 0.05, {"dimension": dim})  # fmt: skip


@rule("drift", dimension=str)
def drift(con, options, policy) -> list[Result]:
    """A finding per judge version pair (judge_drift) whose drift flag is set, on the
    ``dimension`` row (default `all`)."""
    dim = str(options.get("dimension", "all"))
    frame = _read(con, "drift", s.DRIFT_MART, ["judge_before", s.DRIFT_JUDGE, "drift_flag"],
                  {"dimension": dim})  # fmt: skip
    if isinstance(frame, Result):
        return [frame]
    if policy.judges:
        frame = frame[frame[s.DRIFT_JUDGE].isin(policy.judges)]
    if frame.empty:
        return [Result("drift", "-", "skipped", "judge_drift has no version pair to check")]
    out = []
    for _, r in frame.iterrows():
        subject = f"{r['judge_before']} -> {r[s.DRIFT_JUDGE]}"
        parts = [f"drift_flag {str(bool(r['drift_flag'])).lower()}"]
        if "drift_reasons" in r and isinstance(r["drift_reasons"], str):
            parts.append(f"reasons {r['drift_reasons']}")
        if "mean_shift" in r:
            parts.append(f"mean_shift {_fmt(r['mean_shift'])} "
                         f"[{_fmt(r.get('mean_shift_ci_low'))}, "
                         f"{_fmt(r.get('mean_shift_ci_high'))}]")  # fmt: skip
        if "pass_flip_rate" in r:
            parts.append(f"pass_flip_rate {_fmt(r['pass_flip_rate'])}")
        status = "failed" if bool(r["drift_flag"]) else "passed"
        out.append(Result("drift", subject, status, ", ".join(parts), _severity(options)))
    return out


COMPARISON_ITEM: dict[str, type | tuple[type, ...]] = {
    "better": str, "worse": str, "judge": str, "dimension": str,
    "min_difference": NUMBER, "adjustment": str,
}  # fmt: skip
ADJUSTED = {"none": "p_value", "holm": "p_value_holm", "bh": "p_value_bh"}


@rule("comparisons", items=list)
def comparisons(con, options, policy) -> list[Result]:
    """A finding per listed pair where ``better`` is not shown better than ``worse`` by
    more than ``min_difference`` (default 0): the lower bound of better - worse
    (model_comparisons, judge `panel` and dimension `all` by default) must exceed it,
    and with ``adjustment`` holm or bh the adjusted p-value must be below 1 - ci_level."""
    frame = _read(con, "comparisons", s.COMPARISONS_MART, ["model_a", "model_b", "difference"])
    if isinstance(frame, Result):
        return [frame]
    out = []
    for item in options.get("items", []):
        judge, dim = item.get("judge", "panel"), item.get("dimension", "all")
        better, worse = item["better"], item["worse"]
        limit = float(item.get("min_difference", 0.0))
        adjustment = item.get("adjustment", "none")
        if adjustment not in ADJUSTED:
            raise InputError(f"comparisons: adjustment must be one of {', '.join(ADJUSTED)}")
        subject = f"{better} > {worse} ({judge}, {dim})"
        a, b = sorted((better, worse))
        row = frame[(frame["judge"] == judge) & (frame["dimension"] == dim)
                    & (frame["model_a"] == a) & (frame["model_b"] == b)]  # fmt: skip
        if row.empty or row.iloc[0]["difference"] != row.iloc[0]["difference"]:
            out.append(Result("comparisons", subject, "failed",
                              "no estimate in model_comparisons for this pair",
                              _severity(options)))  # fmt: skip
            continue
        r = row.iloc[0]
        sign = 1.0 if better == a else -1.0
        diff = sign * r["difference"]
        low, high = sorted((sign * r["ci_low"], sign * r["ci_high"]))
        p = r[ADJUSTED[adjustment]]
        alpha = 1 - float(r["ci_level"])
        failed = not (low > limit) or (adjustment != "none" and not p < alpha)
        text = (f"difference {_fmt(diff)} [{_fmt(low)}, {_fmt(high)}] at {_fmt(r['ci_level'])}, "
                f"{ADJUSTED[adjustment]} {p:.3g}, min_difference {limit:g}")  # fmt: skip
        out.append(Result("comparisons", subject, "failed" if failed else "passed", text,
                          _severity(options)))  # fmt: skip
    return out
