"""Pairwise judgments (marts in models/marts/pairwise/ and pairwise_human/): position,
self-preference, equal opportunity, length and perplexity biases, and the same
measured against human verdicts.

The route the marts run works on SQL aggregates:

- ``sums``: the pairwise_bias, pairwise_joint_bias and pairwise_perplexity_bins
  tables from the int_pairwise_* aggregates.
- ``fits``: the logistic fits of those marts (length slope, given-human and joint
  fits) and Cohen's kappa, on ``logistic``.
- ``logistic``: the logistic fits with their separation check and failures reported.
- ``columns``: the marts' columns, types and interval texts (the contract both
  routes produce).
- ``features``: the length feature of a pair (shared with the simulator).
- ``marts``: the functions the dbt model files call.
- ``reference``: the same tables computed from the rows, with its own code for every
  step (statsmodels for the fits): the independent check the tests and benchmarks use.
"""
