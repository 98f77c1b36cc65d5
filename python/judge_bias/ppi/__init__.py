"""Prediction-powered inference of human-scale model scores (marts in models/marts/ppi/).

- ``estimator``: stratified PPI++ with the skewness-corrected interval.
- ``clusters``: the covariance of strata sharing completions (the pooled rows).
- ``pairs``: int_ppi_unit_pair_sums in dense linear algebra.
- ``marts``: the two PPI marts.
- ``settings``: the dbt vars the marts read (ci_level, ppi_lambda, ppi_interval).
"""
