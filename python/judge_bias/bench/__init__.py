"""Benchmarks and studies (``judge-bias bench``, ``judge-bias coverage``); never timed in tests.

- ``runs``: the build, OLS, agreement, pairwise and scale benchmarks, each printing ratios
  against a reference measured in the same run.
- ``steps``: the OLS benchmark's steps, each run in a fresh process for a clean peak memory.
- ``hostile``: hostile inputs (huge lines, many judges) and what the build says about them.
- ``pairwise``: the pairwise functions alone (``python -m judge_bias.bench.pairwise``).
- ``glm``: the GLM fits on count cells against raw-row numpyro (``bench --glm``).
- ``glm_sbc``: simulation-based calibration of the GLM sampler (``bench --glm-sbc``).
- ``coverage_study``: the simulated coverage of the self-bias intervals.
- ``compare_builds``: two warehouses compared table by table (``python -m
  judge_bias.bench.compare_builds A.duckdb B.duckdb``): a change that must leave results
  alone is checked with it.
- ``agreement_marts``: CPU time and peak memory of the agreement marts' Python steps on a
  built warehouse (``python -m judge_bias.bench.agreement_marts DB``).
- ``incremental``: ``bench --incremental``: an append of 1% new ratings against the full
  build of the same data, in one run.
- ``profile``: the per-step profile of one build (``bench --scale-build``), sampled from a
  child process.
- ``spark``: ``bench --engine spark``: the whole build on DuckDB and on the Spark route.
- ``sql_timing``: compiled dbt SQL models timed on a built warehouse, old against new.
"""

__all__ = [
    "agreement_marts",
    "compare_builds",
    "coverage_study",
    "glm",
    "glm_sbc",
    "hostile",
    "incremental",
    "pairwise",
    "profile",
    "runs",
    "spark",
    "sql_timing",
    "steps",
]
