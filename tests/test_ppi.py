"""Stratified PPI++ (judge_bias.ppi.estimator) against ppi_py, and by simulation.

References: ppi_py (the PPI++ authors' package) ``ppi_mean_pointestimate`` and
``ppi_mean_ci`` with ``lam=None`` (power tuning), ``lam=1`` (plain PPI) and
``lam=0`` (classical), stratum by stratum, then combined with weights N_k / N as
EmertonData/glide's StratifiedPPIMeanEstimator does; and a simulation with a
planted (exactly known) mean for coverage and variance reduction.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate
from scipy import stats

from judge_bias.ppi.estimator import combine, hall_inverse, interval, moments, stratum_estimates

POINT_TOL = 1e-9
# ppi_py computes the interval from the same moments with numpy's std; ours from
# moments combined algebraically: equal up to rounding
CI_TOL = 1e-9


def _stratum(rng: np.random.Generator, n: int, big_n: int, bias: float, noise: float):
    """Human scores on a 5-point 0-1 scale and a biased, noisy judge rounded to it."""
    y = rng.integers(0, 5, size=n + big_n) / 4
    yhat = np.clip(np.rint((y + bias + rng.normal(0, noise, size=y.size)) * 4) / 4, 0, 1)
    return y[:n], yhat[:n], yhat[n:]


def _frame(strata: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]) -> pd.DataFrame:
    rows = [{"group": "g", "stratum": k, **moments(*v)} for k, v in strata.items()]
    return pd.DataFrame(rows)


CASES = [  # n labelled, N unlabelled, judge bias, judge noise
    (40, 400, 0.0, 0.1),
    (25, 2_000, 0.2, 0.15),
    (200, 300, -0.1, 0.3),
    (12, 50, 0.05, 0.6),  # a poor judge: lambda near 0
    (60, 600, 0.0, 0.0),  # a perfect judge: lambda clipped to 1
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.4])
def test_one_stratum_equals_ppi_py(case, lam) -> None:
    rng = np.random.default_rng(hash(case) % 2**32)
    y, yhat, yu = _stratum(rng, *case)
    frame = _frame({"k": (y, yhat, yu)})
    est = stratum_estimates(frame, ci_level=0.9, lam=lam, method="wald").iloc[0]
    skew = stratum_estimates(frame, ci_level=0.9, lam=lam).iloc[0]  # same estimate and se
    assert (skew["estimate"], skew["std_error"]) == (est["estimate"], est["std_error"])
    ref = float(ppi_mean_pointestimate(y, yhat, yu, lam=lam)[0])
    low, high = ppi_mean_ci(y, yhat, yu, alpha=0.1, lam=lam)
    assert est["estimate"] == pytest.approx(ref, abs=POINT_TOL)
    assert est["ci_low"] == pytest.approx(float(low[0]), abs=CI_TOL)
    assert est["ci_high"] == pytest.approx(float(high[0]), abs=CI_TOL)
    if lam is None:  # the tuned lambda ppi_py uses, recovered from its point estimate
        delta = yu.mean() - yhat.mean()
        assert est["ppi_lambda"] == pytest.approx((ref - y.mean()) / delta, abs=1e-7)
    c_low, c_high = classical_mean_ci(y, alpha=0.1)
    assert est["classical_estimate"] == pytest.approx(y.mean(), abs=POINT_TOL)
    half = 0.5 * (c_high - c_low)
    z = stats.norm.ppf(0.95)
    assert est["classical_std_error"] * z == pytest.approx(float(np.squeeze(half)), abs=CI_TOL)


def test_perfect_and_useless_judges_give_lambda_one_and_zero() -> None:
    rng = np.random.default_rng(3)
    y = rng.integers(0, 5, size=50) / 4
    yu = rng.integers(0, 5, size=500) / 4
    perfect = stratum_estimates(_frame({"k": (y, y, yu)}), 0.9).iloc[0]
    assert perfect["ppi_lambda"] == 1.0
    noise = rng.random(50)
    useless = stratum_estimates(_frame({"k": (y, noise, rng.random(500))}), 0.9).iloc[0]
    ref = ppi_mean_pointestimate(y, noise, rng.random(500))  # independent: lambda ~ 0
    assert useless["ppi_lambda"] <= 0.2
    assert abs(float(ref[0]) - y.mean()) < 0.1


def test_strata_combined_with_weights_equal_ppi_py_per_stratum() -> None:
    rng = np.random.default_rng(11)
    data = {
        "faithfulness, same_family=true": _stratum(rng, 15, 150, 0.25, 0.1),
        "faithfulness, same_family=false": _stratum(rng, 60, 700, 0.0, 0.15),
        "helpfulness, same_family=true": _stratum(rng, 9, 90, 0.1, 0.2),
        "helpfulness, same_family=false": _stratum(rng, 45, 500, -0.05, 0.1),
    }
    strata = stratum_estimates(_frame(data), ci_level=0.9, method="wald")
    got = combine(strata, ["group"], ci_level=0.9, method="wald").iloc[0]

    sizes = {k: len(y) + len(yu) for k, (y, _, yu) in data.items()}
    total = sum(sizes.values())
    theta, var, cls, cls_var = 0.0, 0.0, 0.0, 0.0
    z = stats.norm.ppf(0.95)
    for k, (y, yhat, yu) in data.items():
        w = sizes[k] / total
        point = float(ppi_mean_pointestimate(y, yhat, yu)[0])
        low, high = ppi_mean_ci(y, yhat, yu, alpha=0.1)
        theta += w * point
        var += w**2 * (float((high - low)[0]) / (2 * z)) ** 2
        cls += w * y.mean()
        cls_var += w**2 * y.var() / len(y)
    assert got["estimate"] == pytest.approx(theta, abs=POINT_TOL)
    assert got["ci_low"] == pytest.approx(theta - z * np.sqrt(var), abs=CI_TOL)
    assert got["ci_high"] == pytest.approx(theta + z * np.sqrt(var), abs=CI_TOL)
    assert got["classical_estimate"] == pytest.approx(cls, abs=POINT_TOL)
    assert got["classical_std_error"] == pytest.approx(np.sqrt(cls_var), abs=CI_TOL)
    assert got["ess_gain"] == pytest.approx(cls_var / var, rel=1e-9)
    assert got["n_strata"] == 4 and got["n_units"] == total
    all_yhat = np.concatenate([np.concatenate([yh, yu]) for _, yh, yu in data.values()])
    assert got["judge_mean"] == pytest.approx(all_yhat.mean(), abs=POINT_TOL)


def test_a_stratum_without_labels_leaves_the_group_without_estimate() -> None:
    rng = np.random.default_rng(5)
    data = {"a": _stratum(rng, 30, 300, 0.0, 0.1), "b": _stratum(rng, 1, 100, 0.0, 0.1)}
    got = combine(stratum_estimates(_frame(data), 0.9), ["group"], 0.9).iloc[0]
    assert np.isnan(got["estimate"]) and np.isnan(got["classical_estimate"])
    assert got["notes"] == "fewer than 2 human labels: not estimable in [b]"
    assert got["n_labelled"] == 31 and got["n_units"] == 431


def test_all_labelled_is_the_human_mean() -> None:
    rng = np.random.default_rng(6)
    y, yhat, _ = _stratum(rng, 80, 0, 0.1, 0.1)
    got = stratum_estimates(_frame({"k": (y, yhat, np.array([]))}), 0.9).iloc[0]
    assert got["ppi_lambda"] == 0.0
    assert got["estimate"] == pytest.approx(y.mean(), abs=1e-12)
    assert "lambda 0" in got["stratum_note"]


def test_bad_arguments_are_refused() -> None:
    frame = _frame({"k": (np.ones(3), np.ones(3), np.ones(3))})
    with pytest.raises(ValueError, match="ci_level"):
        stratum_estimates(frame, 1.5)
    with pytest.raises(ValueError, match="lambda"):
        stratum_estimates(frame, 0.9, lam=2.0)
    with pytest.raises(ValueError, match="moments missing"):
        stratum_estimates(frame.drop(columns="cov_y_yhat"), 0.9)
    with pytest.raises(ValueError, match="human scores"):
        moments(np.ones(3), np.ones(4), np.ones(2))


# --------------------------------------------------------------------------- simulation

# Four strata: two dimensions x same-family flag. Human scores on a 5-point 0-1
# scale with stratum-specific probabilities, so the true mean is exact; the judge
# favours its own family (+0.15 there), is lenient on one dimension, and noisy.
SIM_STRATA = {  # name: (units, label probabilities of 0, .25, .5, .75, 1, judge bias)
    "faithfulness, same_family=true": (400, (0.05, 0.10, 0.25, 0.35, 0.25), 0.15),
    "faithfulness, same_family=false": (1_600, (0.10, 0.20, 0.30, 0.25, 0.15), 0.0),
    "helpfulness, same_family=true": (400, (0.10, 0.15, 0.30, 0.30, 0.15), 0.20),
    "helpfulness, same_family=false": (1_600, (0.15, 0.25, 0.30, 0.20, 0.10), 0.05),
}
SIM_NOISE = 0.12
LEVELS = np.arange(5) / 4


def _true_mean() -> float:
    total = sum(units for units, _, _ in SIM_STRATA.values())
    return sum(units / total * float(np.dot(p, LEVELS)) for units, p, _ in SIM_STRATA.values())


def _simulate(
    share: float, reps: int, seed: int, stratified: bool = True, method: str = "skew"
) -> pd.DataFrame:
    """``reps`` replications: labels kept for a uniform ``share`` of each stratum's
    units; returns the combined PPI++ and classical estimates per replication."""
    rng = np.random.default_rng(seed)
    frames = []
    for name, (units, probs, bias) in SIM_STRATA.items():
        n = max(2, round(share * units))
        y = rng.choice(LEVELS, p=probs, size=(reps, units))
        yhat = np.clip(np.rint((y + bias + rng.normal(0, SIM_NOISE, y.shape)) * 4) / 4, 0, 1)
        yl, yh, yu = y[:, :n], yhat[:, :n], yhat[:, n:]
        cy, ch = yl - yl.mean(1, keepdims=True), yh - yh.mean(1, keepdims=True)
        frames.append(
            pd.DataFrame(
                {
                    "rep": np.arange(reps),
                    "stratum": name if stratified else "all",
                    "n_labelled": n,
                    "mean_y": yl.mean(1),
                    "mean_yhat_labelled": yh.mean(1),
                    "var_y": yl.var(1),
                    "var_yhat_labelled": yh.var(1),
                    "cov_y_yhat": (cy * ch).mean(1),
                    "n_unlabelled": units - n,
                    "mean_yhat_unlabelled": yu.mean(1),
                    "var_yhat_unlabelled": yu.var(1),
                    "m3_y": (cy**3).mean(1),
                    "m3_y_y_yhat": (cy * cy * ch).mean(1),
                    "m3_y_yhat_yhat": (cy * ch * ch).mean(1),
                    "m3_yhat_labelled": (ch**3).mean(1),
                    "m3_yhat_unlabelled": ((yu - yu.mean(1, keepdims=True)) ** 3).mean(1),
                    "_y": list(yl),
                    "_yh": list(yh),
                    "_yu": list(yu),
                }
            )
        )
    m = pd.concat(frames, ignore_index=True)
    if not stratified:  # pool the strata's raw values and recompute the moments
        pooled = m.groupby("rep").agg(
            _y=("_y", lambda s: np.concatenate(list(s))),
            _yh=("_yh", lambda s: np.concatenate(list(s))),
            _yu=("_yu", lambda s: np.concatenate(list(s))),
        )
        m = pd.DataFrame(
            [
                {"rep": r, "stratum": "all", **moments(row._y, row._yh, row._yu)}
                for r, row in pooled.iterrows()
            ]
        )
    m = m.drop(columns=[c for c in ("_y", "_yh", "_yu") if c in m])
    return combine(stratum_estimates(m, 0.9, method=method), ["rep"], 0.9, method=method)


COVERAGE_REPS = 4_000
LEVEL = 0.9
# The band: within 3 Monte Carlo standard errors (sqrt(0.9 x 0.1 / 4000) = 0.0047) of
# the level, less a finite-sample allowance below it: lambda is tuned on the same ~20
# labels a stratum (5% share), which costs PPI++ about a point of coverage
# (measured 0.886 at 5%, 0.889 at 10%, 0.900 at 20%; 0.884 with 20 piled labels).
FINITE_SAMPLE_ALLOWANCE = 0.01
MC_SE = float(np.sqrt(LEVEL * (1 - LEVEL) / COVERAGE_REPS))
BAND = (LEVEL - FINITE_SAMPLE_ALLOWANCE - 3 * MC_SE, LEVEL + 3 * MC_SE)  # 0.876-0.914


@pytest.mark.parametrize("share", [0.05, 0.10, 0.20])
def test_coverage_of_90_percent_intervals(share: float) -> None:
    truth = _true_mean()
    est = _simulate(share, COVERAGE_REPS, seed=int(share * 1000))
    covered = ((est["ci_low"] <= truth) & (truth <= est["ci_high"])).mean()
    classical = ((est["classical_ci_low"] <= truth) & (truth <= est["classical_ci_high"])).mean()
    bias = est["estimate"].mean() - truth
    print(
        f"\nlabel share {share:.0%}: PPI++ coverage {covered:.3f}, human-only {classical:.3f} "
        f"({COVERAGE_REPS} replications, true mean {truth:.4f}, PPI++ bias {bias:+.4f})"
    )
    assert BAND[0] <= covered <= BAND[1]
    assert BAND[0] <= classical <= BAND[1]
    # the human-only mean is unbiased; PPI++ has an O(1/n) bias from lambda being
    # tuned on the same labels, small beside its spread (0.15 sd at 20 labels a stratum)
    mc_se = est["classical_estimate"].std() / np.sqrt(COVERAGE_REPS)
    assert abs(est["classical_estimate"].mean() - truth) < 4 * mc_se
    assert abs(bias) < 0.25 * est["estimate"].std()


@pytest.mark.parametrize("share", [0.05, 0.10, 0.20])
def test_variance_reduction_against_human_only(share: float) -> None:
    est = _simulate(share, 2_000, seed=7 + int(share * 100))
    ratio = est["estimate"].var() / est["classical_estimate"].var()
    mean_ratio = (est["std_error"] ** 2).mean() / (est["classical_std_error"] ** 2).mean()
    pooled = _simulate(share, 300, seed=7 + int(share * 100), stratified=False)
    unstratified = (pooled["std_error"] ** 2).mean() / (est["std_error"] ** 2).mean()
    print(
        f"\nlabel share {share:.0%}: variance PPI++ / human-only {ratio:.3f} across 2000 "
        f"replications ({mean_ratio:.3f} from the estimated variances); unstratified / "
        f"stratified PPI++ variance {unstratified:.2f}"
    )
    # a judge whose errors have sd 0.12 on scores with sd ~0.3 halves the variance or better
    assert ratio < 0.5
    assert mean_ratio == pytest.approx(ratio, rel=0.15)  # the estimated variance is right
    # stratifying by same-family removes the judge's bias differences from the noise
    assert unstratified > 1.0


# --------------------------------------------------------------------------- the interval


# Hall (1992): T1 = T + a T^2/3 + a^2 T^3/27 + a/6, written out here, not imported
def _hall(t: np.ndarray, a: float) -> np.ndarray:
    return t + a * t**2 / 3 + a**2 * t**3 / 27 + a / 6


@pytest.mark.parametrize("a", [-2.0, -0.7, -0.05, 0.0, 0.3, 1.5])
def test_hall_inverse_inverts_the_transformation(a: float) -> None:
    x = np.linspace(-4, 4, 41)
    np.testing.assert_allclose(_hall(hall_inverse(x, a), a), x, atol=1e-10)


def test_skewness_corrected_interval_is_students_on_symmetric_data() -> None:
    y = np.array([0.0, 0.25, 0.5, 0.5, 0.75, 1.0] * 5)  # third moments exactly 0
    yu = np.array([0.25, 0.5, 0.75] * 40)
    frame = _frame({"k": (y, y[::-1].copy(), yu)})
    skew = stratum_estimates(frame, 0.9, lam=0.0).iloc[0]
    assert skew["third_cumulant"] == pytest.approx(0.0, abs=1e-15)
    # no skewness: Student's interval on the unbiased variance, as scipy gives it
    low, high = stats.t.interval(0.9, 29, loc=y.mean(), scale=stats.sem(y))
    assert (skew["ci_low"], skew["ci_high"]) == pytest.approx((low, high), abs=1e-12)
    assert (skew["classical_ci_low"], skew["classical_ci_high"]) == pytest.approx(
        (low, high), abs=1e-12
    )


@pytest.mark.parametrize("lam", [0.0, 0.6, 1.0])
def test_third_cumulant_equals_scipy_moments_of_the_estimator(lam: float) -> None:
    """k3 of theta = m3(Y - lambda Yhat) / n^2 + lambda^3 m3(Yhat_u) / N^2 (the sum of
    two independent means), with scipy's third central moments of the arrays."""
    rng = np.random.default_rng(21)
    y, yhat, yu = _stratum(rng, 30, 300, 0.1, 0.2)
    y = np.where(rng.random(30) < 0.6, 1.0, y)  # piled up at the top: skewed
    got = stratum_estimates(_frame({"k": (y, yhat, yu)}), 0.9, lam=lam).iloc[0]
    want = stats.moment(y - lam * yhat, 3) / 30**2 + lam**3 * stats.moment(yu, 3) / 300**2
    assert got["third_cumulant"] == pytest.approx(want, rel=1e-9, abs=1e-15)
    assert got["classical_third_cumulant"] == pytest.approx(stats.moment(y, 3) / 30**2)
    # the interval: Student's t on the unbiased variances' Welch-Satterthwaite degrees
    # of freedom, shifted by Hall's correction at a = k3 / se^3
    v_lab = np.var(y - lam * yhat, ddof=1) / 30
    v_unl = lam**2 * np.var(yu, ddof=1) / 300 if lam > 0 else 0.0
    df = (v_lab + v_unl) ** 2 / (v_lab**2 / 29 + v_unl**2 / 299)
    q, a, se = stats.t.ppf(0.95, df), want / got["std_error"] ** 3, np.sqrt(v_lab + v_unl)
    t_low, t_high = 3 / a * (np.cbrt(1 + a * (np.array([q, -q]) - a / 6)) - 1)
    assert got["ci_low"] == pytest.approx(got["estimate"] - t_low * se, rel=1e-9)
    assert got["ci_high"] == pytest.approx(got["estimate"] - t_high * se, rel=1e-9)
    if lam == 0:  # human scores piled at the top: the interval reaches further down
        assert got["estimate"] - got["ci_low"] > got["ci_high"] - got["estimate"]


def test_unknown_interval_is_refused() -> None:
    with pytest.raises(ValueError, match="interval must be one of"):
        interval(np.zeros(1), np.ones(1), np.zeros(1), 0.9, "bootstrap")


# Scores piled at the top, like Play Favorites' Faithfulness (67-75% of completions at
# 1.0, a long tail down to 0.33): the planted distribution of human scores, and a
# judge that hardly tracks them (lambda near 0, as measured there).
PILED_LEVELS = np.array([1 / 3, 0.5, 2 / 3, 0.75, 5 / 6, 11 / 12, 1.0])
PILED_PROBS = np.array([0.005, 0.005, 0.01, 0.02, 0.07, 0.17, 0.72])


@pytest.mark.parametrize("n", [20, 40])
def test_coverage_with_scores_piled_at_the_top(n: int) -> None:
    """Hall's interval keeps its level where Wald's under-covers (closed-form truth:
    the planted mean), 4,000 replications of n labels and 9 n unlabelled units."""
    rng = np.random.default_rng(n)
    truth = float(PILED_PROBS @ PILED_LEVELS)
    reps, big_n = COVERAGE_REPS, 9 * n
    y = rng.choice(PILED_LEVELS, p=PILED_PROBS, size=(reps, n + big_n))
    yhat = np.clip(0.9 + 0.2 * (y - truth) + rng.normal(0, 0.1, y.shape), 0, 1)
    m = pd.DataFrame(
        [{"rep": r, "stratum": "all", **moments(y[r, :n], yhat[r, :n], yhat[r, n:])}
         for r in range(reps)]
    )  # fmt: skip
    cover = {}
    for method in ("skew", "wald"):
        est = combine(stratum_estimates(m, 0.9, method=method), ["rep"], 0.9, method=method)
        ppi = ((est["ci_low"] <= truth) & (truth <= est["ci_high"])).mean()
        human = ((est["classical_ci_low"] <= truth) & (truth <= est["classical_ci_high"])).mean()
        cover[method] = (ppi, human)
    print(f"\n{n} labels, scores piled at 1.0 (true mean {truth:.4f}): 90% coverage "
          f"PPI++ skew-corrected {cover['skew'][0]:.3f}, Wald {cover['wald'][0]:.3f}; "
          f"human-only {cover['skew'][1]:.3f}, Wald {cover['wald'][1]:.3f}")  # fmt: skip
    for ppi, human in (cover["skew"],):
        assert BAND[0] <= ppi <= BAND[1] and BAND[0] <= human <= BAND[1]
    assert cover["wald"][0] < cover["skew"][0] - 0.02  # what the correction is for
