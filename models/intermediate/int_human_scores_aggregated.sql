-- One row per completion x dimension: the accepted human labels aggregated.
-- Expert (gold) labels are not part of the reference.
-- A label that is itself a mean of k annotators (n_aggregated = k) counts k
-- annotators, in n_annotators and in the mean (weighted by k: the mean of
-- all the underlying annotators' scores); median, sd, min and max are over
-- the labels as given. NA labels are counted apart and kept out of them.
-- Labels that all agree have that label as their mean, exactly: the weighted
-- sum rounds (0.667 * 3 / 3 is 0.6670000000000001), and a lone pre-aggregated
-- mean must reach the marts as given (human_score_norm = gt / scale top).
-- The median of one or two labels is their midpoint, min / 2 + max / 2 (the same
-- label when they agree), as DuckDB's median() interpolates it (equal on 200k
-- random pairs and at the extremes, where (min + max) / 2 overflows past 9e307:
-- tests/test_human_median.py; the mean and sd of such labels still overflow, as
-- DuckDB's own avg() and stddev_samp() do); median() runs only on the
-- completions with more labels: as a holistic aggregate it keeps a buffer per
-- group, and 16.7M completions (100M ratings) spilled 38 GB in 4 minutes.
with

annotations as (
    select * from {{ ref('int_human_annotations_checked') }}
    where reject_code is null and role = 'annotator'
),

aggregated as (
    select
        prompt_id,
        model,
        dimension,
        case
            when min(human_score) = max(human_score) then min(human_score)
            else {{ ieee_divide(
                'sum(human_score * n_aggregated)',
                'sum(n_aggregated) filter (where human_score is not null)'
            ) }}
        end as human_score_mean,
        case
            when min(human_score) = max(human_score) then min(human_score)
            else min(human_score) / 2 + max(human_score) / 2
        end as human_score_midpoint,
        stddev_samp(human_score) as human_score_sd,
        min(human_score) as human_score_min,
        max(human_score) as human_score_max,
        any_value(scale_min) as scale_min,
        any_value(scale_max) as scale_max,
        count(human_score) as n_labels,
        coalesce(sum(n_aggregated) filter (where human_score is not null), 0) as n_annotators,
        count(*) filter (where is_na) as n_na_labels,
        bool_or(n_aggregated > 1) as is_pre_aggregated,
        case
            when count(human_score) >= 2 then min(human_score) = max(human_score)
        end as all_agree
    from annotations
    group by prompt_id, model, dimension
),

larger_medians as (
    select
        annotations.prompt_id,
        annotations.model,
        annotations.dimension,
        median(annotations.human_score) as human_score_median
    from annotations
    inner join aggregated
        on
            annotations.prompt_id is not distinct from aggregated.prompt_id
            and annotations.model is not distinct from aggregated.model
            and annotations.dimension is not distinct from aggregated.dimension
    where aggregated.n_labels > 2
    group by annotations.prompt_id, annotations.model, annotations.dimension
),

final as (
    select
        aggregated.prompt_id,
        aggregated.model,
        aggregated.dimension,
        aggregated.human_score_mean,
        case
            when aggregated.n_labels > 2 then larger_medians.human_score_median
            else aggregated.human_score_midpoint
        end as human_score_median,
        aggregated.human_score_sd,
        aggregated.human_score_min,
        aggregated.human_score_max,
        aggregated.scale_min,
        aggregated.scale_max,
        aggregated.n_labels,
        aggregated.n_annotators,
        aggregated.n_na_labels,
        aggregated.is_pre_aggregated,
        aggregated.all_agree
    from aggregated
    left join larger_medians
        on
            aggregated.prompt_id is not distinct from larger_medians.prompt_id
            and aggregated.model is not distinct from larger_medians.model
            and aggregated.dimension is not distinct from larger_medians.dimension
)

select * from final
