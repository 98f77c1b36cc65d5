-- Per judge x item (dimension x prompt x model x framing) rated in two runs or
-- more: the number of runs, the squared deviations of its normalised scores
-- from their mean, the share of its run pairs whose scores differ, and its
-- lowest and highest score (judge_stability).
with

-- an item is rated twice only in two runs (a key repeated within a run is rejected
-- as a duplicate before the facts): with one run in the facts nothing below can be
-- kept, and the filter on this one row skips the pass over every rating (1.6 CPU s
-- at 10M ratings, this one 0.05). Runs compared by their hashes (a null run hashes
-- too): a nocase default collation would make 'Run1' and 'run1' one run here, where
-- the duplicate check keeps both (review21a); a collision only runs the pass.
runs as (
    select
        min({{ row_key_hash(['run_id']) }}) < max({{ row_key_hash(['run_id']) }}) as several
    from {{ ref('fct_judge_ratings') }}
),

-- read twice and not materialised (each reader scans the columns it needs); the
-- columns named, so a column of fct_judge_ratings can never clash with item_key
ratings as {{ not_materialized() }} (
    select
        judge,
        dimension,
        prompt_id,
        model,
        framing,
        judge_score_norm,
        {{ row_key_hash(['judge', 'dimension', 'prompt_id', 'model', 'framing']) }} as item_key
    from {{ ref('fct_judge_ratings') }}
    where judge_score_norm is not null and (select several from runs)
),

-- the items rated twice or more, found by one narrow count: most folders repeat
-- few items or none, and only their ratings go through the two aggregations below
-- (aggregating every rating twice to keep none of them was the model's cost). The
-- count is per hash of the item's key (one number, not five strings: 2.4 -> 1.6
-- CPU s at 10M ratings, issue 34); a collision only adds an item rated once, which
-- the final n_runs >= 2 leaves out.
repeated as (
    select item_key
    from ratings
    group by item_key
    having count(*) >= 2
),

repeated_ratings as (
    select *
    from ratings
    where item_key in (select item_key from repeated)
),

value_counts as (
    select
        judge,
        dimension,
        prompt_id,
        model,
        framing,
        judge_score_norm,
        count(*) as n_value
    from repeated_ratings
    group by judge, dimension, prompt_id, model, framing, judge_score_norm
),

items as (
    select
        judge,
        dimension,
        prompt_id,
        model,
        framing,
        sum(n_value) as n_runs,
        sum(n_value * n_value) as sum_sq_counts,
        sum(n_value * judge_score_norm) / sum(n_value) as mean_score,
        sum(n_value * judge_score_norm * judge_score_norm) as sum_sq_scores,
        min(judge_score_norm) as min_score,
        max(judge_score_norm) as max_score
    from value_counts
    group by judge, dimension, prompt_id, model, framing
),

final as (
    select
        judge,
        dimension,
        prompt_id,
        model,
        framing,
        cast(n_runs as integer) as n_runs,
        mean_score,
        -- squared deviations from the item mean, >= 0 up to rounding
        case
            when min_score = max_score then 0.0
            else greatest(sum_sq_scores - n_runs * mean_score * mean_score, 0)
        end as ss,
        (n_runs * n_runs - sum_sq_counts) / (n_runs * (n_runs - 1.0))
            as discordant_share,
        min_score,
        max_score
    from items
    where n_runs >= 2
)

select * from final
