"""The ordinal and pairwise logistic fits keep their warnings out of the log without
touching another thread's: numpy's floating-point warnings silenced for their own
thread (np.errstate), statsmodels' warnings of what the marts' notes say by filters
installed once (stats.fit_warnings), never catch_warnings + simplefilter('ignore'),
which swapped the process's filters while a fit ran: dbt runs two Python models in
threads of one process, and the other model's warnings were dropped (session 20's
review; glm's _autocov had the same, review20b)."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
from statsmodels.tools.sm_exceptions import ConvergenceWarning

from judge_bias.bias import ordinal
from judge_bias.bias.analyses import ORDINAL_COLUMNS
from judge_bias.pairwise import logistic
from tests.test_limits import fact

N_OTHER = 200


def _another_model_warns_inside(monkeypatch: pytest.MonkeyPatch, module: object, name: str):
    """When the fit calls ``module.name`` (inside its quiet block), another thread
    warns N_OTHER times in a loop, and the fit goes on once it has finished."""
    real = getattr(module, name)

    def inside(*args, **kwargs):
        def other_model() -> None:
            for i in range(N_OTHER):
                warnings.warn(f"other model {i}", UserWarning, stacklevel=1)

        thread = threading.Thread(target=other_model)
        thread.start()
        thread.join(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, inside)


def _ordinal_counts(n_prompts: int = 40):
    rows = fact(n_prompts=n_prompts)
    rows = rows.assign(reference=rows["human_score_norm"])
    return rows.groupby(ORDINAL_COLUMNS, as_index=False).size().rename(columns={"size": "n_rows"})


def _logistic_design() -> tuple[np.ndarray, np.ndarray]:
    # a discrete design (the GLM route on distinct rows), not separated
    rng = np.random.default_rng(3)
    o = rng.choice([-1.0, 0.0, 1.0], 600)
    y = (rng.random(600) < 1 / (1 + np.exp(-(0.3 + 0.8 * o)))).astype(float)
    return np.column_stack([np.ones(600), o]), y


@pytest.mark.parametrize("route", ["ordinal", "logistic"])
def test_another_threads_warnings_survive_a_fit(monkeypatch, route) -> None:
    if route == "ordinal":
        counts = _ordinal_counts()
        _another_model_warns_inside(monkeypatch, ordinal, "compress")
        run = lambda: ordinal.fit_ordinal(counts, "ordinal", "quality", 0.9)  # noqa: E731
    else:
        x, y = _logistic_design()
        _another_model_warns_inside(monkeypatch, logistic, "GLM")
        run = lambda: logistic.maximum_likelihood(x, y)  # noqa: E731
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fitted = run()
    other = [w for w in caught if str(w.message).startswith("other model")]
    assert len(other) == N_OTHER
    assert fitted is not None


def test_the_fits_own_warnings_stay_out_of_the_log() -> None:
    """A separated design warns in statsmodels (numpy's overflow in exp and a
    ConvergenceWarning on the Logit route, PerfectSeparationWarning on the GLM route):
    none reaches the log, what the fit reports instead is its result; a
    ConvergenceWarning raised outside statsmodels still does."""
    rng = np.random.default_rng(0)
    x = np.column_stack([np.ones(200), rng.normal(size=200)])
    discrete = np.column_stack([np.ones(400), rng.choice([-1.0, 0.0, 1.0], 400)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter("always")
        _, converged = logistic.maximum_likelihood(x, (x[:, 1] > 0).astype(float))
        logistic.maximum_likelihood(discrete, (discrete[:, 1] > 0).astype(float))
        warnings.warn("not statsmodels'", ConvergenceWarning, stacklevel=1)
    assert not converged
    assert [str(w.message) for w in caught] == ["not statsmodels'"]


def test_an_ordinal_fit_that_fails_says_so_in_its_notes_not_the_log() -> None:
    """One prompt: every self term at the edge of its range, BFGS does not converge
    and the Hessian does not invert (statsmodels warns of both): the notes say it,
    the log stays quiet."""
    counts = _ordinal_counts(n_prompts=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter("always")
        fitted = ordinal.fit_ordinal(counts, "ordinal", "quality", 0.9)
    assert "the optimiser did not converge" in fitted.fit["notes"]
    assert "the Hessian is not invertible" in fitted.fit["notes"]
    assert [str(w.message) for w in caught] == []


def test_the_filters_go_ahead_of_another_threads_always() -> None:
    """Another thread's "always" put first (glm's warnings_to_notes records so) would
    show a fit's statsmodels warnings: ignore_fit_warnings puts its filters ahead of
    it (review21b: they were found present behind it, and the fit printed)."""
    from statsmodels.tools.sm_exceptions import HessianInversionWarning

    from judge_bias.stats.fit_warnings import _decides, ignore_fit_warnings

    with warnings.catch_warnings(record=True) as seen:
        ignore_fit_warnings()
        assert _decides(ConvergenceWarning)
        warnings.simplefilter("always")  # as warnings_to_notes, in the other thread
        assert not _decides(ConvergenceWarning)
        ignore_fit_warnings()
        assert _decides(ConvergenceWarning) and _decides(HessianInversionWarning)
        warnings.warn_explicit(
            "from a fit", ConvergenceWarning, "model.py", 1, module="statsmodels.base.model"
        )
        warnings.warn_explicit("not a fit's", ConvergenceWarning, "x.py", 1, module="mine")
    assert [str(w.message) for w in seen] == ["not a fit's"]
