"""Perturbation (CALM) biases (mart models/marts/perturbation/perturbation_bias).

- ``calm``: the robustness, consistency and error rates with their item bootstrap.
- ``marts``: the perturbation mart as its dbt model file calls it.
"""
