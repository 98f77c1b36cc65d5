"""The pairwise marts computed from the rows, the independent reference of the
aggregate route (``judge_bias.pairwise.sums``): it imports nothing from it; the
tests compare the two on the same judgments.

- ``rates``: pairwise_bias and the perplexity bins.
- ``human``: the columns against human verdicts and the joint fit.
- ``logit``: its logistic fits (statsmodels, its own separation program).
"""
