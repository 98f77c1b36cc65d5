"""Statistics on aggregates other than the bias regressions: intervals, agreement,
self vs peer, pairwise and perturbation measures.

- ``intervals``: Wilson, Newcombe, prompt-clustered (CR1) rates and bootstrap helpers.
- ``agreement``: Krippendorff's alpha and judge-human correlations.
- ``counterfactual``: the judge-human alpha before and after calibration (prompt bootstrap).
- ``self_vs_peer``: prompt-clustered self vs peer t-tests under positive/inverted framing.
- ``pairwise`` and ``pairwise_features``: position, self-preference, equal opportunity,
  length and perplexity measures of pairwise judges.
- ``pairwise_human``: pairwise bias against human verdicts (accuracy, kappa, conditional
  first-slot rate and length slope, the joint self/length logistic, invalid verdicts).
- ``clustered_correlation``: prompt-level design effects of judge-human correlations.
- ``perturbation``: the CALM robustness, consistency and error rates.
- ``ppi``: stratified prediction-powered inference (PPI++) of human-scale model scores,
  with its skewness-corrected interval; ``ppi_marts``: the two PPI marts from it.
"""

__all__ = [
    "agreement",
    "clustered_correlation",
    "counterfactual",
    "intervals",
    "pairwise",
    "pairwise_features",
    "pairwise_human",
    "perturbation",
    "ppi",
    "ppi_marts",
    "self_vs_peer",
]
