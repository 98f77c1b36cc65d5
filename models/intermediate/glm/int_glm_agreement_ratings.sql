{{ config(incremental_by_prompt(none, 'item')) -}}
{{ load_prompt_dependencies() -}}
-- The rows the GLM agreement reads: one on-scale rating per dimension, grader
-- and unit (prompt x model), the first run in run_id order. Krippendorff's alpha
-- (observed, and with the fitted grader effects removed) is over units with each
-- grader once, so this is its grain, not a row per rating (issue 17: the
-- ratings are filtered and deduplicated in SQL, not in pandas).
-- Only the agreement of an ordinal model reads it: built empty (its columns, no
-- rows) when no model the agreement reads (judge_bias.glm.runner AGREEMENT_MODELS)
-- is fitted (glm_input_needed).
with

ratings as {{ not_materialized() }} (
    select
        dimension,
        grader,
        grader_type,
        model,
        prompt_id as item,
        prompt_id || '|' || model as unit,
        score,
        run_id,
        {{ row_key_hash(['dimension', 'grader', "prompt_id || '|' || model"]) }} as unit_key
    from {{ ref('int_glm_ratings') }}
    where on_scale{% if not glm_input_needed(['items', 'grader_model', 'hierarchical']) %}
        and false{% endif %}{% if is_incremental() %}
        and {{ load_prompt_condition() }}{% endif %}
),

-- Nearly every (dimension, grader, unit) holds one row: the keys that repeat are
-- found by one narrow aggregation and only their rows are ranked (a window over
-- every row, which DuckDB runs as an arg_min of the whole row per key, took
-- twice the CPU at 1M ratings). The same rows as ranking all of them. The count
-- is per hash of the key (one number, not three strings: the count of 11.7M
-- keys was most of the model's cost at 10M ratings, issue 34); a collision only
-- makes a key a candidate, which the ranking by the key itself keeps first. Rows
-- that tie on run_id (a judge and an annotator of the same name; never two of one
-- grader, as the checked models reject duplicate keys) are taken in grader_type
-- then score order, so that DuckDB and Spark keep the same one.
repeated as (
    select
        unit_key,
        true as is_repeated
    from ratings
    group by unit_key
    having count(*) > 1
),

keyed as {{ not_materialized() }} (
    select
        ratings.*,
        repeated.is_repeated
    from ratings
    left join repeated
        on ratings.unit_key = repeated.unit_key
),

ranked as (
    select
        *,
        row_number() over (
            partition by dimension, grader, unit
            order by run_id, grader_type, score
        ) as run_rank
    from keyed
    where is_repeated
),

-- the rows not repeated (each its key's first) and the first of each repeated key
first_rows as (
    select
        *,
        cast(1 as bigint) as run_rank
    from keyed
    where is_repeated is null
    union all
    select * from ranked
    where run_rank = 1
),

final as (
    select
        dimension,
        grader,
        grader_type,
        model,
        item,
        unit,
        score,
        run_id
    from first_rows
)

select * from final
