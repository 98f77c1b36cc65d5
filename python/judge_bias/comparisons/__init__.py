"""The decisions a team takes with a judge: is model A better than model B once the
judge's error is taken out (``paired``: the PPI difference of two models' mean human
scores, paired by prompt, with Holm and Benjamini-Hochberg adjustments, ``adjust``),
and how many human labels a target precision needs (``budget``). The dbt models of
models/marts/comparisons/ call ``marts``; the defaults live in ``settings``.
"""
