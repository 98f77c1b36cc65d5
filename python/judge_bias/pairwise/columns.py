"""The pairwise marts' columns, their types and the texts of their interval
methods: the contract both routes (``sums`` on aggregates, ``reference`` on rows)
produce; definitions in ``reference.rates`` and ``reference.human``."""

from __future__ import annotations

ALL = "all"
RATE_CI = "Wilson, design-effect n (clusters = prompts)"
CI_METHOD = (
    f"rates: {RATE_CI}; eo_bias: Newcombe hybrid score from the two recalls, "
    "with their prompt-clustered correlation; "
    "length_slope: Wald, cluster-robust SE by prompt"
)
PERPLEXITY_CI = RATE_CI
N_PERPLEXITY_BINS = 10

RATES = (
    "position_consistency",
    "first_slot_rate",
    "first_slot_rate_inconsistent",
    "self_preference_rate",
    "self_preference_prob",
    "self_preference_rate_ties_half",
)
EO_COUNTS = (
    "eo_human_own_judge_own",
    "eo_human_own_judge_other",
    "eo_human_other_judge_own",
    "eo_human_other_judge_other",
)
PAIRWISE_BIAS_COLUMNS: dict[str, str] = {
    "judge": "string",
    "opponent": "string",
    "n_pairs": "Int64",
    "n_judgments": "Int64",
    "n_ties": "Int64",
    "n_swapped_pairs": "Int64",
    "n_inconsistent_pairs": "Int64",
    "n_self_judgments": "Int64",
    "n_self_preference_ties": "Int64",
    **{f"{rate}{suffix}": "float64" for rate in RATES for suffix in ("", "_ci_low", "_ci_high")},
    **dict.fromkeys(EO_COUNTS, "Int64"),
    "eo_recall_own": "float64",
    "eo_recall_other": "float64",
    "eo_bias": "float64",
    "eo_bias_ci_low": "float64",
    "eo_bias_ci_high": "float64",
    "n_length_judgments": "Int64",
    "length_slope": "float64",
    "length_slope_ci_low": "float64",
    "length_slope_ci_high": "float64",
    "ci_method": "string",
    "notes": "string",
}
PERPLEXITY_BIN_COLUMNS: dict[str, str] = {
    "judge": "string",
    "bin": "Int64",
    "log_ppl_diff_low": "float64",
    "log_ppl_diff_high": "float64",
    "n_judgments": "Int64",
    "judge_first_rate": "float64",
    "judge_first_rate_ci_low": "float64",
    "judge_first_rate_ci_high": "float64",
    "n_human": "Int64",
    "human_first_rate": "float64",
    "human_first_rate_ci_low": "float64",
    "human_first_rate_ci_high": "float64",
    "ci_method": "string",
}


INVALID = "invalid"
HUMAN_RATES = (
    "invalid_rate",
    "position_consistency_invalid_inconsistent",
    "position_consistency_llmbar",
    "accuracy",
    "accuracy_with_invalid",
    "p_prefer_longer",
    "human_p_prefer_longer",
)
LOGIT_TERMS = ("first_slot_rate_given_human", "length_slope_given_human")
HUMAN_COLUMNS: dict[str, str] = {
    "n_invalid": "Int64",
    "n_swapped_pairs_with_invalid": "Int64",
    "n_human_judgments": "Int64",
    **{
        f"{rate}{suffix}": "float64"
        for rate in HUMAN_RATES
        for suffix in ("", "_ci_low", "_ci_high")
    },
    "kappa": "float64",
    "n_given_human_judgments": "Int64",
    **{
        f"{term}{suffix}": "float64"
        for term in LOGIT_TERMS
        for suffix in ("", "_ci_low", "_ci_high")
    },
}
WITH_HUMAN_COLUMNS: dict[str, str] = (
    {k: v for k, v in PAIRWISE_BIAS_COLUMNS.items() if k not in ("ci_method", "notes")}
    | HUMAN_COLUMNS
    | {"ci_method": "string", "notes": "string"}
)
WITH_HUMAN_CI = f"{CI_METHOD}; *_given_human: Wald, cluster-robust SE by prompt"
JOINT_TERMS = (
    "position_logodds",
    "self_preference_logodds",
    "length_slope",
    "human_verdict_logodds",
)
JOINT_COLUMNS: dict[str, str] = {
    "judge": "string",
    "n_judgments": "Int64",
    "n_own_judgments": "Int64",
    "uses_human_verdict": "boolean",
    **{
        f"{term}{suffix}": "float64"
        for term in JOINT_TERMS
        for suffix in ("", "_ci_low", "_ci_high")
    },
    "self_preference_rate": "float64",
    "length_slope_unconditional": "float64",
    "ci_method": "string",
    "notes": "string",
}


def counted(n: int, noun: str) -> str:
    """``n`` and the noun, plural unless n is 1: "1 verdict", "3 verdicts"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def all_ties(n: int, where: str = "") -> str:
    """ "all N verdicts<where> are ties", "the 1 verdict<where> is a tie" for one."""
    return f"the 1 verdict{where} is a tie" if n == 1 else f"all {n} verdicts{where} are ties"


OWN_PAIRS = " on pairs with the judge's own model"


def no_human_verdict_note(n_fitted: int) -> str:
    """pairwise_joint_bias's note when none of the ``n_fitted`` judgments fitted
    (decisive, valid, with lengths when any has them) has a human verdict; a judge
    with none fitted has only the all-ties note (all_ties_note)."""
    return f"no human verdict on the {counted(n_fitted, 'judgment')} fitted: no human-verdict term"


def own_ties_rate_note(n_ties: int) -> str:
    """pairwise_bias's note when self_preference_rate is null on a row with own
    pairs: their ``n_ties`` verdicts are all ties (no decisive one to count)."""
    them = "it" if n_ties == 1 else "them"
    return (
        f"{all_ties(n_ties, OWN_PAIRS)}: no self_preference_rate "
        f"(self_preference_rate_ties_half counts {them} half)"
    )


def no_length_slope_note(n_judgments: int, n_ties: int, ties_with_lengths: bool = False) -> str:
    """pairwise_bias's note on a pooled row without a length slope (and without
    the slope's own note): a judge whose ``n_judgments`` valid verdicts are all
    ties has nothing to fit, lengths or not; one whose ties have lengths lacks
    them on its decisive verdicts only; otherwise no completion lengths."""
    if n_judgments and n_ties == n_judgments:
        return f"{all_ties(n_judgments)}: no length slope"
    if ties_with_lengths:
        return no_decisive_lengths_note(n_judgments - n_ties)
    return "no completion lengths"


def no_decisive_lengths_note(n_decisive: int) -> str:
    """The note of a judge whose ties have lengths and whose ``n_decisive``
    decisive verdicts (the only ones fitted) have none."""
    return f"no lengths on its {counted(n_decisive, 'decisive verdict')}"


def no_length_term_note(n_decisive: int, ties_with_lengths: bool) -> str:
    """pairwise_joint_bias's note when none of the ``n_decisive`` decisive verdicts
    has lengths: "no completion lengths" is false when the judge's ties have them."""
    if ties_with_lengths:
        return no_decisive_lengths_note(n_decisive) + ": no length term"
    return "no completion lengths: no length term"


def all_ties_note(n_ties: int) -> str:
    """pairwise_joint_bias's note for a judge with no decisive valid verdict: its
    ``n_ties`` valid verdicts are all ties (the only note: no term can be fitted,
    and lengths or own pairs may well be there, on the ties)."""
    return f"{all_ties(n_ties)}: nothing decisive to fit"


def no_own_pair_note(n_own_decisive: int, n_own_ties: int) -> str:
    """pairwise_joint_bias's note when the fit has no judgment of the judge's own
    model: ``n_own_decisive`` decisive ones all left out for missing lengths, or
    its ``n_own_ties`` own-pair verdicts all ties, or no own pair at all."""
    if n_own_decisive:
        without = "without lengths" if n_own_decisive == 1 else "none with lengths"
        return (
            f"{counted(n_own_decisive, 'decisive judgment')} with the judge's own model, "
            f"{without}: no self-preference term"
        )
    if n_own_ties:
        return f"{all_ties(n_own_ties, OWN_PAIRS)}: no self-preference term"
    return "no pair with the judge's own model: no self-preference term"


GIVEN_HUMAN_NOTE = "given_human_note"  # the conditional fit's note, joined into notes
JOINT_CI = "Wald, prompt-clustered sandwich (CR1, statsmodels' small-sample factor)"
