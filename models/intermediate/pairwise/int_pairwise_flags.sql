-- One row per pairwise judgment the pairwise marts count (accepted rows and rows
-- kept as `invalid`), with the flags their rates are built from and its pair's
-- flags: the row-level step of the pairwise marts, in SQL (issue 17). The
-- aggregates the Python models read (int_pairwise_prompt_sums,
-- int_pairwise_logit_cells, int_pairwise_kappa_counts,
-- int_pairwise_perplexity_cells) group it.
with

judgments as (
    select
        judge,
        prompt_id,
        model_first,
        model_second,
        pair_key,
        case when kept_as_invalid then 'invalid' else verdict end as verdict,
        human_verdict,
        p_first,
        length_first,
        length_second,
        perplexity_first,
        perplexity_second,
        coalesce(is_self_first, false) as self_first,
        coalesce(is_self_second, false) as self_second
    from {{ ref('int_pairwise_checked') }}
    where reject_code is null or kept_as_invalid
),

flagged as (
    select
        *,
        verdict = 'invalid' as invalid,
        verdict in ('first', 'second') as decisive,
        verdict = 'first' as chose_first,
        self_first or self_second as own,
        (self_first and verdict = 'first')
        or (self_second and verdict = 'second') as picked_own,
        -- the other model of a pair holding the judge's own model
        case
            when self_first then model_second
            when self_second then model_first
        end as opponent,
        -- what the verdict names: a model, a tie or an invalid verdict
        case
            when verdict = 'first' then 'm:' || model_first
            when verdict = 'second' then 'm:' || model_second
            when verdict = 'tie' then 't'
            else 'i'
        end as chosen,
        coalesce(human_verdict = 'first', false) as human_first,
        coalesce(human_verdict in ('first', 'second'), false) as human_decisive,
        coalesce(human_verdict in ('first', 'second', 'tie'), false) as human_any,
        coalesce(
            (human_verdict = 'first' and self_first)
            or (human_verdict = 'second' and self_second),
            false
        ) as human_own
    from judgments
),

-- pairs of valid verdicts (the existing columns leave invalid ones out) and of
-- all verdicts (the columns with invalid verdicts)
valid_pairs as (
    select
        pair_key,
        count(*) as valid_pair_size,
        min(chosen) = max(chosen) as valid_pair_consistent
    from flagged
    where not invalid
    group by pair_key
),

all_pairs as (
    select
        pair_key,
        count(*) as pair_size,
        min(chosen) = max(chosen) as pair_same,
        max(case when invalid then 1 else 0 end) = 1 as pair_any_invalid
    from flagged
    group by pair_key
),

final as (
    select
        flagged.*,
        valid_pairs.valid_pair_size,
        valid_pairs.valid_pair_consistent,
        all_pairs.pair_size,
        all_pairs.pair_same,
        all_pairs.pair_any_invalid
    from flagged
    left join valid_pairs
        on flagged.pair_key = valid_pairs.pair_key
    inner join all_pairs
        on flagged.pair_key = all_pairs.pair_key
)

select * from final
