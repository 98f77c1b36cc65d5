"""OLS bias regressions from sufficient statistics: the database aggregates, Python solves.

Every column of the bias design is an indicator of a categorical cell times
one of z = (1, reference, length_feature): judge offsets, self, family and
dimension indicators multiply 1, the judge slopes multiply the reference and
the judge length slopes multiply the length feature. For the rows of one
*design cell* (judge, self, same family, dimension) the design row is
x = A_d z with a fixed p x 3 matrix A_d, so

    X'X = sum_d A_d (sum z z') A_d'        X'y = sum_d A_d (sum y z)

and the sandwich "meats" need only aggregates as well:

- HC0/HC1: sum e^2 z z' per cell, with e = y - z'b_d and b_d = A_d' beta,
  expands into moments of (y, reference, length) of degree <= 4 (y to the
  power <= 2), summed once per cell by the database;
- cluster by prompt: the score of prompt g is sum_d A_d (sum y z - (sum z z') b_d)
  over the rows of g and d: first and second moments per prompt and cell;
- HC3 needs each row's leverage z'A_d'(X'X)^-1 A_d z: it runs on row-grain
  statistics (one row per rating, n x 3 numbers, still no n x p matrix).

A *stats frame* is a DataFrame with the key columns of ``KEY_COLUMNS`` (a
superset of what any analysis filters on), optionally prompt_id, and one
column per moment ``m_y{a}r{b}l{c}`` = sum of y^a reference^b length^c over
the rows it stands for (length taken as 0 where it is missing; has_length
says which). The SQL of the same aggregation is the dbt macro
``bias_moment_sums`` (macros/sufficient_stats.sql); ``stats_from_rows`` is
its pandas twin for in-memory data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse

KEY_COLUMNS = [
    "reference_kind",  # human, or llm (the mean score of reference_family's judges)
    "reference_family",
    "judge",
    "judge_family",
    "model",
    "model_family",
    "is_self",
    "is_same_family",
    "dimension",
    "dataset",
    "task_type",
    "has_length",
]
MAX_DEGREE = 4
MAX_Y = 2
LOW_DEGREE = 2  # enough for X'X, X'y, y'y and cluster scores


def moment_name(a: int, b: int, c: int) -> str:
    """The column holding sum y^a * reference^b * length^c."""
    return f"m_y{a}r{b}l{c}"


def moments(max_degree: int = MAX_DEGREE) -> list[tuple[int, int, int]]:
    """(a, b, c) exponents with a <= 2 and a + b + c <= max_degree, in the macro's order."""
    return [
        (a, b, c)
        for a in range(MAX_Y + 1)
        for b in range(max_degree + 1)
        for c in range(max_degree + 1)
        if a + b + c <= max_degree
    ]


COUNT = moment_name(0, 0, 0)


def stats_from_rows(rows: pd.DataFrame, grain: str = "row") -> pd.DataFrame:
    """The stats frame of prepared rows (rating, reference, length_feature, keys).

    grain ``cell``: one row per key (all moments, for HC0/HC1); ``prompt``: per
    key and prompt (low moments, for cluster); ``row``: one row per rating
    (all moments; supports every standard-error type).
    """
    if grain not in ("cell", "prompt", "row"):
        raise ValueError(f"grain must be cell, prompt or row, not {grain!r}")
    frame = rows.copy()
    if "length_feature" not in frame:
        frame["length_feature"] = np.nan
    if "reference_kind" not in frame:
        frame["reference_kind"] = "human"
    for col in KEY_COLUMNS:
        if col not in frame:
            frame[col] = None  # a key no analysis of this frame filters on
    frame["has_length"] = frame["length_feature"].notna()
    y = frame["rating"].to_numpy(dtype=float)
    r = frame["reference"].to_numpy(dtype=float)
    # a missing length as 0 changes no estimate: has_length is a key column, so rows
    # without a length sit in their own cells, and the only fit that reads the length
    # moments (Spec(length=True), bias.regression) drops those cells and counts them
    # in its notes ("... rows without length_feature left out"); the moments without
    # length (c = 0) are unaffected, as 0.0**0 == 1 (the SQL twin does the same)
    ln = np.nan_to_num(frame["length_feature"].to_numpy(dtype=float), nan=0.0)
    degree = LOW_DEGREE if grain == "prompt" else MAX_DEGREE
    values = {moment_name(a, b, c): y**a * r**b * ln**c for a, b, c in moments(degree)}
    keep_prompt = "prompt_id" in frame and grain != "cell"
    keys = KEY_COLUMNS + (["prompt_id"] if keep_prompt else [])
    out = pd.concat([frame[keys].reset_index(drop=True), pd.DataFrame(values)], axis=1)
    if grain == "row":
        return out
    by = KEY_COLUMNS + (["prompt_id"] if grain == "prompt" else [])
    return out.groupby(by, dropna=False, sort=False, as_index=False).sum(numeric_only=False)


def has_moments(frame: pd.DataFrame) -> bool:
    return COUNT in frame.columns


def n_rows(frame: pd.DataFrame) -> int:
    """How many ratings a stats frame stands for."""
    return int(frame[COUNT].sum()) if len(frame) else 0


@dataclass(frozen=True)
class Term:
    """One column of the design: what it estimates and for whom."""

    name: str
    term_type: str  # self, family, judge_offset, judge_slope, dimension, length
    judge: str | None = None
    family: str | None = None
    dimension: str | None = None


@dataclass
class CellDesign:
    """The design in cell form: the p x 3 matrices A_d of the cells, stacked as one
    sparse (cells * 3) x p matrix S (row 3d + k holds column k of A_d, transposed:
    S[3d + k, q] = A_d[q, k]), each stats row's cell, and the terms. A cell's rows
    hold at most six non-zeros, so memory and time grow with cells + p^2, never
    with cells x p."""

    S: scipy.sparse.csr_matrix
    cell: np.ndarray
    terms: list[Term]
    notes: list[str] = field(default_factory=list)

    @property
    def n_cells(self) -> int:
        return self.S.shape[0] // 3

    def sandwich(self, w: np.ndarray) -> np.ndarray:
        """sum_d A_d W_d A_d' (p x p, dense) for per-cell 3 x 3 matrices ``w`` (cells, 3, 3)."""
        n = self.n_cells
        blocks = scipy.sparse.bsr_matrix((w, np.arange(n), np.arange(n + 1)), shape=(3 * n, 3 * n))
        return np.asarray((self.S.T @ (blocks @ self.S)).todense())

    def apply(self, v: np.ndarray) -> np.ndarray:
        """sum_d A_d v_d (p) for per-cell 3-vectors ``v`` (cells, 3)."""
        return np.asarray(self.S.T @ v.reshape(-1))

    def coefficients(self, params: np.ndarray) -> np.ndarray:
        """A_d' params of each cell: its z-coefficients (cells, 3)."""
        return np.asarray(self.S @ params).reshape(-1, 3)

    def select(self, keep: list[int]) -> CellDesign:
        """The design restricted to the columns ``keep`` (notes shared)."""
        return CellDesign(self.S[:, keep], self.cell, [self.terms[i] for i in keep], self.notes)

    def rows(self, z: np.ndarray) -> np.ndarray:
        """Each stats row's design row x_i = A_{cell_i} z_i (n x p, dense)."""
        X = sum(scipy.sparse.diags(z[:, k]) @ self.S[k::3][self.cell] for k in range(3))
        return np.asarray(X.todense())


def _summarised(notes: list[str], what: str, names: list[str], limit: int = 20) -> None:
    """Append one note per name, or one summary naming the first few when there are many."""
    if len(names) <= limit:
        notes += [what.format(name) for name in names]
    else:
        shown = ", ".join(names[:5])
        notes.append(f"{what.format('...')} for {len(names):,} of them (e.g. {shown})")


def design_size(stats: pd.DataFrame, dimension_effects: bool, length: bool) -> tuple[int, int]:
    """(cells, parameters) of the design of ``stats`` before any collinear column is
    left out, counted without building it (for the budget check)."""
    judges = stats["judge"].astype(str)
    is_self = stats["is_self"].astype(bool)
    same_family = stats["is_same_family"].astype(bool)
    keys = [judges, is_self, same_family] + ([stats["dimension"]] if dimension_effects else [])
    n_cells = len(pd.MultiIndex.from_arrays(keys).unique()) if len(stats) else 0
    n_judges = judges.nunique()
    p = (2 + length) * n_judges + judges[is_self].nunique()
    p += stats.loc[same_family.to_numpy(), "judge_family"].nunique()
    if dimension_effects:
        p += max(stats["dimension"].nunique() - 1, 0)
    return n_cells, int(p)


def cell_design(stats: pd.DataFrame, dimension_effects: bool, length: bool) -> CellDesign:
    """Terms (as the authors' formula codes them) and the matrices A_d."""
    notes: list[str] = []
    judge = stats["judge"].astype(str).to_numpy()
    is_self = stats["is_self"].astype(bool).to_numpy()
    same_family = stats["is_same_family"].astype(bool).to_numpy()
    judge_family = stats["judge_family"].astype(str).to_numpy()
    dims = stats["dimension"].astype(str).to_numpy()
    judges = sorted(set(judge))
    family_of = dict(zip(judge, judge_family, strict=True))
    terms: list[Term] = []
    col: dict[tuple, int] = {}

    def add(key: tuple, term: Term) -> None:
        col[key] = len(terms)
        terms.append(term)

    for j in judges:
        add(("offset", j), Term(f"judge[{j}]", "judge_offset", judge=j, family=family_of[j]))
    for j in judges:
        add(("slope", j), Term(f"judge[{j}]:reference", "judge_slope", j, family_of[j]))
    self_judges = set(judge[is_self])
    for j in judges:
        if j in self_judges:
            add(("self", j), Term(f"self[{j}]", "self", judge=j, family=family_of[j]))
    _summarised(
        notes,
        "self[{}] not identifiable: the judge never rates its own model",
        [j for j in judges if j not in self_judges],
    )
    family_rows = set(judge_family[same_family])
    families = sorted(set(family_of.values()))
    for fam in families:
        if fam in family_rows:
            add(("family", fam), Term(f"family[{fam}]", "family", family=fam))
    _summarised(
        notes,
        "family[{}] not identifiable: its judges rate no other model of the family",
        [fam for fam in families if fam not in family_rows],
    )
    levels = sorted(set(dims))
    if dimension_effects:
        for d in levels[1:]:  # treatment coding, first level as baseline (as patsy)
            add(("dimension", d), Term(f"dimension[{d}]", "dimension", dimension=d))
        if len(levels) > 1:
            notes.append(f"dimension effects relative to '{levels[0]}'")
    if length:
        for j in judges:
            add(("length", j), Term(f"judge[{j}]:length", "length", j, family_of[j]))

    cells = pd.DataFrame(
        {
            "judge": judge,
            "is_self": is_self,
            "same_family": same_family,
            "dimension": dims if dimension_effects else "",
        }
    )
    codes, uniques = pd.MultiIndex.from_frame(cells).factorize()
    rows: list[int] = []
    cols: list[int] = []
    for d, (j, s, f, dim) in enumerate(uniques):
        entries = [(0, ("offset", j)), (1, ("slope", j))]
        if s:
            entries.append((0, ("self", j)))
        if f:
            entries.append((0, ("family", family_of[j])))
        if ("dimension", dim) in col:
            entries.append((0, ("dimension", dim)))
        if length:
            entries.append((2, ("length", j)))
        for k, key in entries:
            rows.append(3 * d + k)
            cols.append(col[key])
    S = scipy.sparse.csr_matrix(
        (np.ones(len(rows)), (rows, cols)), shape=(3 * len(uniques), len(terms))
    )
    return CellDesign(S, np.asarray(codes), terms, notes)


def _moment(stats: pd.DataFrame, a: int, zs: tuple[int, ...]) -> np.ndarray:
    """sum y^a * prod(z_k for k in zs) per stats row (z = 1, reference, length)."""
    return stats[moment_name(a, zs.count(1), zs.count(2))].to_numpy(dtype=float)


def _zz(stats: pd.DataFrame) -> np.ndarray:
    """sum z z' per stats row: (rows, 3, 3)."""
    out = np.empty((len(stats), 3, 3))
    for k in range(3):
        for m in range(k, 3):
            out[:, k, m] = out[:, m, k] = _moment(stats, 0, (k, m))
    return out


def _zy(stats: pd.DataFrame) -> np.ndarray:
    return np.column_stack([_moment(stats, 1, (k,)) for k in range(3)])


def _by_cell(values: np.ndarray, cell: np.ndarray, n_cells: int) -> np.ndarray:
    """Sum the rows of ``values`` (rows, ...) within cells."""
    out = np.zeros((n_cells, *values.shape[1:]))
    np.add.at(out, cell, values)
    return out


def collinear_note(terms: list[Term], keep: list[int]) -> str:
    """The bias_fits note naming the terms independent_columns left out."""
    dropped = [t.name for i, t in enumerate(terms) if i not in set(keep)]
    return f"{', '.join(dropped)} not identifiable: collinear with other terms in this data"


def independent_columns(gram: np.ndarray, tol: float = 1e-9) -> list[int]:
    """Columns kept in order, leaving out each that is (almost) a linear combination
    of the kept earlier ones: its residual sum of squares on them is below ``tol``
    times its own (1 - R^2 < tol).

    That residual is the squared pivot of a Cholesky factorisation of the kept
    columns, so a full factorisation whose pivots all pass keeps every column
    (one O(p^3) step); otherwise the factor grows one kept column at a time
    (O(p^3) in all, not a solve per column)."""
    p = gram.shape[0]
    own = np.diag(gram)
    if p and (own > 0).all():
        try:
            pivots = np.diag(np.linalg.cholesky(gram)) ** 2
        except np.linalg.LinAlgError:
            pivots = None
        if pivots is not None and (pivots > tol * own).all():
            return list(range(p))
    import scipy.linalg

    keep: list[int] = []
    factor = np.zeros((p, p))  # lower Cholesky factor of gram[keep, keep]
    for k in range(p):
        if own[k] <= 0:
            continue
        m = len(keep)
        w = scipy.linalg.solve_triangular(factor[:m, :m], gram[keep, k], lower=True)
        resid = own[k] - w @ w
        if resid > tol * own[k]:
            factor[m, :m] = w
            factor[m, m] = np.sqrt(resid)
            keep.append(k)
    return keep


@dataclass
class StatsFit:
    terms: list[Term]
    params: np.ndarray
    cov: np.ndarray
    n_obs: int
    r_squared: float | None  # None: the outcome is constant (r_squared_of says)
    notes: list[str]


def fit_stats(
    stats: pd.DataFrame,
    se_type: str,
    dimension_effects: bool = True,
    length: bool = False,
    design: CellDesign | None = None,
) -> StatsFit:
    """OLS of the bias design on a stats frame, with the ``se_type`` sandwich.

    Equals statsmodels ``ols(...).fit(cov_type=se_type)`` on the rows the
    frame stands for (HC1 = HC0 * n / (n - p); cluster with statsmodels'
    G / (G - 1) * (n - 1) / (n - p)). The caller checks the sizes first and may
    pass the ``design`` it built for that.
    """
    design = design or cell_design(stats, dimension_effects, length)
    cell, n_cells = design.cell, design.n_cells
    zz = _zz(stats)
    zy = _zy(stats)
    gram = design.sandwich(_by_cell(zz, cell, n_cells))
    keep = independent_columns(gram)
    if len(keep) < len(design.terms):
        design.notes.append(collinear_note(design.terms, keep))
        design = design.select(keep)
        gram = gram[np.ix_(keep, keep)]
    terms = design.terms
    xy = design.apply(_by_cell(zy, cell, n_cells))
    n = float(stats[COUNT].sum())
    p = len(terms)
    bread = np.linalg.inv(gram)
    params = np.linalg.solve(gram, xy)
    b = design.coefficients(params)[cell]  # each stats row's z-coefficients
    if se_type in ("HC0", "HC1"):
        meat = _meat_hc0(stats, design, b)
        if se_type == "HC1":
            meat *= n / (n - p)
    elif se_type == "cluster":
        meat = _meat_cluster(stats, design, zz, zy, b, n, p)
    elif se_type == "HC3":
        meat, n_pinned = _meat_hc3(stats, design, b, bread)
        if n_pinned:
            design.notes.append(
                f"HC3: {n_pinned} rating(s) have leverage 1 (a term rests on them alone) and "
                "no residual (0/0): they add nothing to the variance, and the standard errors "
                "of the terms they pin down are not meaningful"
            )
    else:
        raise ValueError(f"unknown se_type {se_type!r}")
    cov = bread @ meat @ bread
    yy = stats[moment_name(2, 0, 0)].to_numpy(dtype=float).sum()
    sum_y = zy[:, 0].sum()
    ssr = yy - 2.0 * params @ xy + params @ gram @ params
    sst = yy - sum_y**2 / n
    r_squared = r_squared_of(ssr, sst, yy, design.notes)
    return StatsFit(terms, params, cov, int(n), r_squared, design.notes)


# the total sum of squares of a constant outcome, computed as yy - (sum y)^2 / n,
# is 0 up to the rounding of yy: within this share of yy it is taken as 0
CONSTANT_OUTCOME_RTOL = 1e-12


def r_squared_of(ssr: float, sst: float, yy: float, notes: list[str]) -> float | None:
    """1 - ssr / sst, or None with a note when the outcome is constant (sst 0 within
    CONSTANT_OUTCOME_RTOL of yy): R-squared is 0/0 there (statsmodels gives nan, or
    -inf when the rounding leaves ssr above 0), never a number."""
    if sst <= CONSTANT_OUTCOME_RTOL * yy:
        notes.append(
            "r_squared is not defined: the outcome is the same on every rating of the "
            "slice (total sum of squares 0)"
        )
        return None
    return 1.0 - ssr / sst


def _meat_hc0(stats: pd.DataFrame, design: CellDesign, b: np.ndarray) -> np.ndarray:
    """sum_d A_d (sum e^2 z z') A_d' from the degree-4 moments:
    e^2 = y^2 - 2 y z'b + (z'b)^2, expanded term by term."""
    if moment_name(0, MAX_DEGREE, 0) not in stats:
        raise ValueError("HC0/HC1 need degree-4 moments: use cell- or row-grain statistics")
    w = np.zeros((len(stats), 3, 3))
    for k in range(3):
        for m in range(k, 3):
            acc = _moment(stats, 2, (k, m)).copy()
            for i in range(3):
                acc -= 2.0 * b[:, i] * _moment(stats, 1, (i, k, m))
                for j in range(3):
                    acc += b[:, i] * b[:, j] * _moment(stats, 0, (i, j, k, m))
            w[:, k, m] = w[:, m, k] = acc
    return design.sandwich(_by_cell(w, design.cell, design.n_cells))


def _meat_cluster(stats, design: CellDesign, zz, zy, b, n: float, p: int) -> np.ndarray:
    """Scores summed within prompts: s_g = sum_d A_d (sum y z - (sum z z') b_d)."""
    if "prompt_id" not in stats:
        raise ValueError("cluster standard errors need prompt-grain statistics (prompt_id)")
    u = zy - np.einsum("ikl,il->ik", zz, b)
    prompt, prompts = pd.factorize(stats["prompt_id"])
    g = len(prompts)
    cols = (design.cell[:, None] * 3 + np.arange(3)[None, :]).ravel()
    rows = np.repeat(prompt, 3)
    U = scipy.sparse.csr_matrix((u.ravel(), (rows, cols)), shape=(g, design.n_cells * 3))
    scores = np.asarray((U @ design.S).todense())  # g x p
    return scores.T @ scores * (g / (g - 1)) * ((n - 1) / (n - p))


# Leverage this close to 1 is 1: the row's fitted value is its own value.
PINNED_LEVERAGE = 1.0 - 1e-8


def _meat_hc3(stats, design: CellDesign, b, bread) -> tuple[np.ndarray, int]:
    """Each row's squared residual over (1 - leverage)^2: row-grain statistics only.
    Rows of leverage 1 (0/0) add nothing; their count is returned for a note."""
    if not (stats[COUNT].to_numpy() == 1).all():
        raise ValueError("HC3 needs each row's leverage: use row-grain statistics")
    cell = design.cell
    z = np.column_stack([np.ones(len(stats)), _moment(stats, 0, (1,)), _moment(stats, 0, (2,))])
    y = _moment(stats, 1, ())
    # m_d = A_d' (X'X)^-1 A_d per cell: m_d[k, l] = S[3d + k] . (S (X'X)^-1)[3d + l]
    spread = np.asarray(design.S @ bread)
    m = np.empty((design.n_cells, 3, 3))
    for k in range(3):
        for j in range(3):
            m[:, k, j] = np.asarray(design.S[k::3].multiply(spread[j::3]).sum(axis=1)).ravel()
    leverage = np.einsum("ik,ikl,il->i", z, m[cell], z)
    e = y - np.einsum("ik,ik->i", z, b)
    pinned = leverage >= PINNED_LEVERAGE
    w = np.where(pinned, 0.0, e**2 / np.where(pinned, 1.0, 1.0 - leverage) ** 2)
    w_d = _by_cell(w[:, None, None] * z[:, :, None] * z[:, None, :], cell, design.n_cells)
    return design.sandwich(w_d), int(pinned.sum())
