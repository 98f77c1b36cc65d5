"""Prediction-powered inference of human-scale model scores (marts in
models/marts/ppi/): ``estimator`` (stratified PPI++ with the skewness-corrected
interval), ``clusters`` (covariance of strata sharing completions), ``marts`` (the
two PPI marts), ``settings`` (ci_level, ppi_lambda, ppi_interval)."""
