{{ config(materialized='view') }}
-- Per cell and prompt, the moments up to degree 2: what cluster-robust (by
-- prompt) standard errors need. A view: computed only when se_type = cluster.
select
    {{ bias_stat_keys() | join(',\n    ') }},
    length_feature is not null as has_length,
    prompt_id,
    {{ bias_moment_sums('rating', 'reference', 'coalesce(length_feature, 0)', max_degree=2) }}
from {{ ref('int_bias_ratings') }}
group by
    {{ bias_stat_keys() | join(',\n    ') }},
    length_feature is not null,
    prompt_id
