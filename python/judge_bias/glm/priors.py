"""Prior settings of the GLMs: HiBayes 1.0's defaults, each one a dbt var.

The defaults are those of HiBayes' ``ordered_logistic_model`` (default preset),
its hierarchical ordered logistic model and its pairwise logistic model, so a
HiBayes user gets the same posterior on the same data. Override any of them
with the dbt var ``glm_priors`` (a mapping of these field names to numbers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

from judge_bias.errors import SettingError


@dataclass(frozen=True)
class Priors:
    """Locations and scales of every prior the registered models use."""

    # intercept ~ Normal(loc, scale)
    intercept_loc: float = 0.0
    intercept_scale: float = 1.0
    # effect-coded main effects: each free coefficient ~ Normal(loc, scale)
    effect_loc: float = 0.0
    effect_scale: float = 1.0
    # categorical x categorical interactions (sum-to-zero rows and columns)
    interaction_loc: float = 0.0
    interaction_scale: float = 1.0
    # cutpoints: c_1 ~ Normal(loc, scale); gaps = LogNormal(loc, scale) + min spacing
    first_cutpoint_loc: float = -4.0
    first_cutpoint_scale: float = 0.2
    cutpoint_gap_loc: float = -0.5
    cutpoint_gap_scale: float = 0.3
    min_cutpoint_spacing: float = 0.3
    # hierarchical: grader-type means ~ Normal(loc, scale), sds ~ HalfCauchy(scale)
    type_mean_loc: float = 0.0
    type_mean_scale: float = 3.0
    type_sigma_scale: float = 1.0
    # items: item and grader x item sds ~ HalfCauchy(scale) (non-centred)
    item_sigma_scale: float = 1.0
    # pairwise: grader length slopes ~ Normal(mu, sigma), mu ~ Normal(loc, scale),
    # sigma ~ HalfNormal(scale)
    length_slope_mean_loc: float = 0.0
    length_slope_mean_scale: float = 0.5
    length_slope_sigma_scale: float = 1.0

    @classmethod
    def from_mapping(cls, overrides: Mapping[str, object] | None) -> Priors:
        """The defaults with ``overrides`` applied; an unknown name is an error."""
        if not overrides:
            return cls()
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise SettingError(f"glm_priors: unknown prior(s) {unknown}; known: {sorted(known)}")
        return replace(cls(), **{k: float(v) for k, v in overrides.items()})  # type: ignore[arg-type]
