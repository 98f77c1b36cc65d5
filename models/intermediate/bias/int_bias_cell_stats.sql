-- Sufficient statistics of the OLS bias analyses (HC0/HC1): per categorical
-- cell, the row count and the sums of powers and cross-products of rating,
-- reference and length_feature up to degree 4 (python/judge_bias/bias/sufficient.py
-- solves the regressions from them). One pass over int_bias_ratings.
{#- On an incremental warehouse (docs/incremental.md): the cells of
    int_bias_cell_reference_moments (one row each), summed from
    int_bias_cell_prompt_moments, whose rows are recomputed only for the prompts and
    runs a load touched. Without the var the SQL is what it was, character for
    character. -#}
{%- set by_prompt = incremental_on() %}
select
    {{ bias_stat_keys() | join(',\n    ') }},
    {{ 'has_length' if by_prompt else 'length_feature is not null as has_length' }},
    {{ bias_moment_totals() if by_prompt else bias_moment_sums('rating', 'reference', 'coalesce(length_feature, 0)') }}
from {{ ref('int_bias_cell_reference_moments') if by_prompt else ref('int_bias_ratings') }}
group by
    {{ bias_stat_keys() | join(',\n    ') }},
    {{ 'has_length' if by_prompt else 'length_feature is not null' }}
