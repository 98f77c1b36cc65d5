"""The decisions a team takes with a judge: is model A better than model B once the
judge's error is taken out, and how many human labels a target precision needs. The
dbt models of models/marts/comparisons/ call ``marts``.

- ``paired``: the PPI difference of two models' mean human scores, paired by prompt.
- ``adjust``: Holm and Benjamini-Hochberg adjustments across the model pairs of a grain.
- ``budget``: the human labels a target precision needs, with and without the judges.
- ``units``: the comparison marts' sufficient statistics from unit rows, as the SQL
  computes them (the tests' reference).
- ``win_rates``: win rates per judge x model from pairwise verdicts.
- ``marts``: the bodies of the comparison dbt models, read within the memory budget.
- ``settings``: the dbt vars the marts read, their defaults here and only here.
"""
