-- Sufficient statistics of the OLS bias analyses (HC0/HC1): per categorical
-- cell, the row count and the sums of powers and cross-products of rating,
-- reference and length_feature up to degree 4 (python/judge_bias/bias/sufficient.py
-- solves the regressions from them). One pass over int_bias_ratings.
select
    {{ bias_stat_keys() | join(',\n    ') }},
    length_feature is not null as has_length,
    {{ bias_moment_sums('rating', 'reference', 'coalesce(length_feature, 0)') }}
from {{ ref('int_bias_ratings') }}
group by
    {{ bias_stat_keys() | join(',\n    ') }},
    length_feature is not null
