-- The cross moments of the pooled PPI rows (python/judge_bias/ppi/clusters.py).
-- A human labels a completion on every dimension at once, so in a row pooling the
-- dimensions (dimension 'all') a completion's units share their label draw and
-- their errors: the estimator's variance is that of its per-completion totals of
-- influence, which needs, beside each stratum's own moments, the sums over every
-- pair of units of one completion of the products of their centred scores. Per
-- judge (or panel) x model (and 'all') x pair of strata (stratum_a of the unit
-- whose dimension sorts first, stratum_b of the other), the nine sums by the
-- pair's label status: ll_* both labelled, lu_* / ul_* one of them, uu_* neither.
-- dy, dh: a labelled unit's human and judge scores minus its stratum's labelled
-- means; du: an unlabelled unit's judge score minus its stratum's unlabelled mean.
-- Rows of one dimension hold one unit per completion: no pairs, no rows here.
-- Built after int_comparison_cross_moments, never beside it (the line below): each
-- pairs the units of a prompt in a hash join (~64M pairs at 10M ratings), and the
-- two at once shared DuckDB's buffer (10M ratings, node wall: 19.7 + 17.1 s side by
-- side, 18.1 + 4.5 one after the other; the whole build's wall the same).
-- depends_on: {{ ref('int_comparison_cross_moments') }}
with

-- each unit centred on the means of both its pooled rows (its model's and model
-- 'all'): the units are paired once and the poolings applied to the sums per pair
-- of unit keys, as the two poolings pair the same units (macros/ppi_pairs.sql)
{{ ppi_unit_pairs(
    moments_where="dimension = 'all'",
    pooled='model',
    own_keys=['model'],
    pair_keys=['model'],
    pair_condition='unit_a.unit_dimension < unit_b.unit_dimension',
    pair_columns={'stratum_a': 'unit_a.stratum', 'stratum_b': 'unit_b.stratum'},
) }}

final as (
    select
        judge,
        is_panel,
        model,
        'all' as dimension,
        stratum_a,
        stratum_b,
        {{ ppi_cross_sums() }}
    from pairs
    group by judge, is_panel, model, stratum_a, stratum_b
)

select * from final
