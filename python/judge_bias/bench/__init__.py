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
"""

__all__ = [
    "compare_builds",
    "coverage_study",
    "glm",
    "glm_sbc",
    "hostile",
    "pairwise",
    "runs",
    "steps",
]
