"""ArviZ's RuntimeWarnings on a scalar constant over the draws go to the fit's
notes, counted, and not into the build log (issue 33)."""

from __future__ import annotations

import threading
import warnings

import arviz as az
import numpy as np

from judge_bias.glm.summarise import warnings_to_notes


def test_arviz_warnings_become_counted_notes() -> None:
    draws = np.random.default_rng(0).normal(size=(2, 100, 3))
    draws[..., 1] = 0.0  # a pinned level: R-hat is 0/0
    notes: list[str] = []
    with warnings.catch_warnings(record=True) as leaked:
        warnings.simplefilter("always")
        with warnings_to_notes(notes):
            table = az.summary(az.convert_to_dataset({"p": draws}), kind="all", round_to="none")
            az.ess(az.convert_to_dataset({"p": draws}), method="folded")
    assert leaked == []  # nothing reaches the log
    assert np.isnan(table["r_hat"].iloc[1]) and np.isfinite(table["r_hat"].iloc[[0, 2]]).all()
    assert len(notes) == 1
    count, _, text = notes[0].partition(" x ")
    assert int(count) >= 2  # r_hat's two split halves, and the folded ESS
    assert text.startswith("RuntimeWarning 'invalid value encountered in scalar divide'")
    assert "constant over the draws" in text


def test_no_warning_no_note_and_distinct_messages_counted() -> None:
    notes: list[str] = []
    with warnings_to_notes(notes):
        pass
    assert notes == []
    with warnings_to_notes(notes):
        for _ in range(3):
            warnings.warn("a", UserWarning, stacklevel=1)
        warnings.warn("b", DeprecationWarning, stacklevel=1)
    assert notes == [
        "3 x UserWarning 'a' while summarising the posterior",
        "1 x DeprecationWarning 'b' while summarising the posterior",
    ]


def test_another_threads_warning_stays_out_of_the_notes() -> None:
    # dbt runs two Python models at once in one process: a warning another model's
    # thread raises while the GLM summarises is not the GLM's (it once put a
    # statsmodels ConvergenceWarning into glm_fits.notes in one build of two)
    notes: list[str] = []
    inside, raised = threading.Event(), threading.Event()

    def other_model() -> None:
        inside.wait(10)
        warnings.warn("from another model", UserWarning, stacklevel=1)
        raised.set()

    thread = threading.Thread(target=other_model)
    thread.start()
    with warnings.catch_warnings(record=True) as outside:
        warnings.simplefilter("always")
        with warnings_to_notes(notes):
            inside.set()
            assert raised.wait(10)
            warnings.warn("the GLM's own", UserWarning, stacklevel=1)
    thread.join()
    assert notes == ["1 x UserWarning 'the GLM's own' while summarising the posterior"]
    # the other thread's warning went on to the hook it would have reached
    assert [str(w.message) for w in outside] == ["from another model"]


def test_a_hook_left_behind_passes_warnings_on() -> None:
    # the review's interleaving: another thread's catch_warnings, entered while the
    # GLM summarised and left after it, restores the GLM's hook; later warnings on
    # this thread must reach the log, not a finished list of notes
    notes: list[str] = []
    with warnings_to_notes(notes):
        left_behind = warnings.showwarning
    with warnings.catch_warnings(record=True) as outside:
        warnings.simplefilter("always")
        restored = warnings.showwarning
        warnings.showwarning = left_behind
        try:
            warnings.warn("after the summary", UserWarning, stacklevel=1)
        finally:
            warnings.showwarning = restored
    assert notes == []
    assert [str(w.message) for w in outside] == ["after the summary"]


def test_a_null_r_hat_says_why_in_the_notes() -> None:
    """glm_effects and glm_pairwise_effects: r_hat is null exactly where a scalar is
    constant over the draws (mcmc_stats.summary, ArviZ's numbers), and notes says
    why there (session 20's new user: a single grader's effect had r_hat null and no
    note): a single level of a factor fixed at 0 by the sum-to-zero coding, a cycle
    indicator with no cycle, else the value (a single level not at 0, two levels
    at 0); a scalar that varies has no note."""
    from types import SimpleNamespace

    from judge_bias.glm.summarise import summarise

    rng = np.random.default_rng(1)
    varying = rng.normal(size=(2, 200, 2))
    draws = {
        "intercept": np.full((2, 200, 1), 1.5),  # constant, not a sum-to-zero level
        "pair_effects": varying,
        "grader_effects": np.zeros((2, 200, 1)),  # the only grader
        "grader_model_effects": np.zeros((2, 200, 2)),  # one grader x two models
        "intransitive_triple": np.zeros((2, 200, 1)),
        # review21c N2: a single level not at 0 is no sum-to-zero level, and a
        # factor of two levels constant at 0 is not a single level
        "grader_type_effects": np.full((2, 200, 1), 0.7),
        "model_effects": np.zeros((2, 200, 2)),
    }
    labels = [
        {"parameter": "intercept", "term_type": "intercept"},
        {"parameter": "pair_effects", "term_type": "pair", "pair": "a vs b"},
        {"parameter": "pair_effects", "term_type": "pair", "pair": "a vs c"},
        {"parameter": "grader_effects", "term_type": "grader", "grader": "judge-x"},
        *(
            {"parameter": "grader_model_effects", "grader": "judge-x", "rated_model": m}
            for m in ("m1", "m2")
        ),
        {"parameter": "intransitive_triple", "pair": "a vs b vs c"},
        {"parameter": "grader_type_effects", "term_type": "grader_type", "grader_type": "llm"},
        *({"parameter": "model_effects", "rated_model": m} for m in ("m1", "m2")),
    ]
    fit = SimpleNamespace(settings=SimpleNamespace(ci_level=0.9))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # ArviZ's 0 / 0
        table = summarise(fit, draws, labels)  # type: ignore[arg-type]
    fixed = "the sum-to-zero coding fixes its effect at 0, not sampled"
    assert table["notes"].astype(object).where(table["notes"].notna(), None).tolist() == [
        "constant over the draws (1.5 in every draw): r_hat null (0 / 0)",
        None,
        None,
        f"constant over the draws (a single grader (judge-x): {fixed}): r_hat null (0 / 0)",
        f"constant over the draws (a single grader (judge-x): {fixed}): r_hat null (0 / 0)",
        f"constant over the draws (a single grader (judge-x): {fixed}): r_hat null (0 / 0)",
        "constant over the draws (no cycle in any draw): r_hat null (0 / 0)",
        "constant over the draws (0.7 in every draw): r_hat null (0 / 0)",
        "constant over the draws (0 in every draw): r_hat null (0 / 0)",
        "constant over the draws (0 in every draw): r_hat null (0 / 0)",
    ]
    assert (table["notes"].notna() == table["r_hat"].isna()).all()
