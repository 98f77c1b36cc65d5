"""Agreement between judges and humans (marts in models/marts/agreement/).

- ``annotator_alpha``: Krippendorff's alpha between annotators, gold agreement.
- ``judge_human``: judge-human correlations on rows or pair counts.
- ``judge_human_sums``: the same correlations from sums DuckDB computes.
- ``headline_alpha``: the alpha a scale's level of measurement picks.
- ``clustered_correlation``: prompt-level design effects of the correlations.
- ``correlation_notes``: why a judge-human statistic is null.
- ``counterfactual``: the judge-human alpha before and after calibration.
- ``self_vs_peer``: prompt-clustered self vs peer tests under both framings.
- ``coded``: a relation's rows as pandas with its key columns as categoricals.
- ``marts``: the agreement marts as their dbt model files call them.
"""

# What a row of self_vs_peer_tests needs (int_self_vs_peer_items' S, R and G), said
# by the report when the table is empty and by the doctor; kept here so neither
# imports self_vs_peer's scipy for it (newuser20: the report named S and R only).
SELF_VS_PEER_NEEDS = (
    "a judge whose name equals a model's (its own model) that scores that model's "
    "completion of a prompt and dimension (S) and, under the same frame, other models' "
    "completions of the same prompt and dimension (G), and another judge that scores the "
    "same completion under the positive frame (R)"
)
