{{ config(materialized='view') }}
-- Per cell and prompt, the moments up to degree 2: what cluster-robust (by
-- prompt) standard errors need. A view: computed only when se_type = cluster.
-- The human rows are aggregated once; an llm_reference row's reference is
-- constant within a cell and prompt (the family's mean score of the
-- completion), so its moments are the human cell's moments that do not
-- involve the reference, and the reference times them for those that do:
-- no aggregation of every rating once per reference family. `human` is read
-- twice and not materialised: aggregated twice, ~10% more CPU than buffering
-- its cells, but 3M ratings then peak at 1.4 GB of buffer, not 1.9 GB.
with

human as {{ not_materialized() }} (
    select
        {{ bias_stat_keys() | join(',\n        ') }},
        length_feature is not null as has_length,
        prompt_id,
        {{ bias_moment_sums('rating', 'reference', 'coalesce(length_feature, 0)', max_degree=2) | indent(4) }}
    from {{ ref('int_bias_ratings') }}
    where reference_kind = 'human'
    group by
        {{ bias_stat_keys() | join(',\n        ') }},
        length_feature is not null,
        prompt_id
),

-- int_bias_ratings' family_reference (macros/completion_means.sql): the mean
-- rating per judge family and completion
family_reference as (
    {{ completion_means(
        ref('int_bias_ratings'),
        {'reference_family': 'judge_family'},
        'rating',
        'reference',
        where="reference_kind = 'human'",
    ) | indent(4) }}
)

select * from human
union all
select
    'llm' as reference_kind,
    family_reference.reference_family,
    human.judge,
    human.judge_family,
    human.model,
    human.model_family,
    human.is_self,
    human.is_same_family,
    human.dimension,
    human.dataset,
    human.task_type,
    human.has_length,
    human.prompt_id,
    human.m_y0r0l0,
    human.m_y0r0l1,
    human.m_y0r0l2,
    family_reference.reference * human.m_y0r0l0 as m_y0r1l0,
    family_reference.reference * human.m_y0r0l1 as m_y0r1l1,
    family_reference.reference * family_reference.reference * human.m_y0r0l0
        as m_y0r2l0,
    human.m_y1r0l0,
    human.m_y1r0l1,
    family_reference.reference * human.m_y1r0l0 as m_y1r1l0,
    human.m_y2r0l0
from human
{{ family_reference_join('human') }}
