-- Per judge x opponent x prompt (opponent null: pairs without the judge's own
-- model), the counts and sums every rate of pairwise_bias is a ratio of:
-- `<rate>_d` units and `<rate>_y` their sum, per prompt because the intervals
-- cluster by prompt. Units are judgments, or pairs for the position
-- consistencies; `valid` ones leave invalid verdicts out. A rate whose units
-- are another column's (self_preference_rate_ties_half: n_self_judgments, its
-- sum from self_preference_y and n_self_preference_ties) has no columns of its own.
with

flags as (
    select * from {{ ref('int_pairwise_flags') }}
),

judgments as (
    select
        judge,
        opponent,
        prompt_id,
        sum(case when not invalid then 1 else 0 end) as n_judgments,
        sum(case when not invalid and not decisive then 1 else 0 end) as n_ties,
        sum(case when not invalid and own then 1 else 0 end) as n_self_judgments,
        sum(case when invalid then 1 else 0 end) as n_invalid,
        count(*) as n_all,
        sum(case when not invalid and human_any then 1 else 0 end) as n_human_judgments,
        sum(case when not invalid and decisive then 1 else 0 end) as first_slot_d,
        sum(case when not invalid and chose_first then 1 else 0 end) as first_slot_y,
        sum(
            case
                when
                    not invalid and decisive and valid_pair_size >= 2
                    and not valid_pair_consistent
                    then 1
                else 0
            end
        ) as first_slot_inconsistent_d,
        sum(
            case
                when
                    not invalid and chose_first and valid_pair_size >= 2
                    and not valid_pair_consistent
                    then 1
                else 0
            end
        ) as first_slot_inconsistent_y,
        sum(case when not invalid and decisive and own then 1 else 0 end) as self_preference_d,
        sum(case when not invalid and decisive and picked_own then 1 else 0 end)
            as self_preference_y,
        -- self_preference_rate_ties_half: (self_preference_y + ties / 2) / n_self_judgments
        sum(case when not invalid and own and not decisive then 1 else 0 end)
            as n_self_preference_ties,
        sum(case when not invalid and own and p_first is not null then 1 else 0 end)
            as self_preference_prob_d,
        sum(
            case
                when not invalid and own and p_first is not null
                    then case when self_first then p_first else 1.0 - p_first end
            end
        ) as self_preference_prob_y,
        sum(
            case
                when not invalid and decisive and own and human_decisive and human_own
                    then 1
                else 0
            end
        ) as eo_recall_own_d,
        sum(
            case
                when not invalid and decisive and picked_own and human_decisive and human_own
                    then 1
                else 0
            end
        ) as eo_recall_own_y,
        sum(
            case
                when not invalid and decisive and own and human_decisive and not human_own
                    then 1
                else 0
            end
        ) as eo_recall_other_d,
        sum(
            case
                when
                    not invalid and decisive and own and not picked_own
                    and human_decisive and not human_own
                    then 1
                else 0
            end
        ) as eo_recall_other_y,
        sum(case when not invalid and human_any then 1 else 0 end) as accuracy_d,
        sum(case when not invalid and human_any and verdict = human_verdict then 1 else 0 end)
            as accuracy_y,
        sum(case when human_any then 1 else 0 end) as accuracy_with_invalid_d,
        sum(case when human_any and verdict = human_verdict then 1 else 0 end)
            as accuracy_with_invalid_y,
        sum(
            case
                when length_first != length_second and not invalid and decisive then 1
                else 0
            end
        ) as prefer_longer_d,
        sum(
            case
                when
                    length_first != length_second and not invalid and decisive
                    and chose_first = (length_first > length_second)
                    then 1
                else 0
            end
        ) as prefer_longer_y,
        sum(case when length_first != length_second and human_decisive then 1 else 0 end)
            as human_prefer_longer_d,
        sum(
            case
                when
                    length_first != length_second and human_decisive
                    and human_first = (length_first > length_second)
                    then 1
                else 0
            end
        ) as human_prefer_longer_y
    from flags
    group by judge, opponent, prompt_id
),

-- one row per pair (pair_key holds the judge, the prompt and the two models, so
-- its rows agree on them; min() picks that value)
valid_pairs as (
    select
        pair_key,
        min(judge) as judge,
        min(opponent) as opponent,
        min(prompt_id) as prompt_id,
        min(valid_pair_size) as valid_pair_size,
        min(case when valid_pair_consistent then 1 else 0 end) = 1 as valid_pair_consistent
    from flags
    where not invalid
    group by pair_key
),

all_pairs as (
    select
        pair_key,
        min(judge) as judge,
        min(opponent) as opponent,
        min(prompt_id) as prompt_id,
        min(pair_size) as pair_size,
        min(case when pair_same then 1 else 0 end) = 1 as pair_same,
        min(case when pair_any_invalid then 1 else 0 end) = 1 as pair_any_invalid
    from flags
    group by pair_key
),

valid_pair_sums as (
    select
        judge,
        opponent,
        prompt_id,
        count(*) as n_pairs,
        sum(case when valid_pair_size >= 2 then 1 else 0 end) as n_swapped_pairs,
        sum(case when valid_pair_size >= 2 and valid_pair_consistent then 1 else 0 end)
            as position_consistency_y
    from valid_pairs
    group by judge, opponent, prompt_id
),

all_pair_sums as (
    select
        judge,
        opponent,
        prompt_id,
        sum(case when pair_size >= 2 then 1 else 0 end) as n_swapped_pairs_all,
        sum(case when pair_size >= 2 and pair_any_invalid then 1 else 0 end)
            as n_swapped_pairs_with_invalid,
        sum(case when pair_size >= 2 and pair_same and not pair_any_invalid then 1 else 0 end)
            as position_consistency_strict_y,
        sum(case when pair_size >= 2 and pair_same then 1 else 0 end)
            as position_consistency_llmbar_y
    from all_pairs
    group by judge, opponent, prompt_id
),

final as (
    select
        judgments.*,
        coalesce(valid_pair_sums.n_pairs, 0) as n_pairs,
        coalesce(valid_pair_sums.n_swapped_pairs, 0) as n_swapped_pairs,
        coalesce(valid_pair_sums.position_consistency_y, 0) as position_consistency_y,
        coalesce(all_pair_sums.n_swapped_pairs_all, 0) as n_swapped_pairs_all,
        coalesce(all_pair_sums.n_swapped_pairs_with_invalid, 0) as n_swapped_pairs_with_invalid,
        coalesce(all_pair_sums.position_consistency_strict_y, 0)
            as position_consistency_strict_y,
        coalesce(all_pair_sums.position_consistency_llmbar_y, 0)
            as position_consistency_llmbar_y
    from judgments
    left join valid_pair_sums
        on
            judgments.judge = valid_pair_sums.judge
            and judgments.opponent is not distinct from valid_pair_sums.opponent
            and judgments.prompt_id = valid_pair_sums.prompt_id
    left join all_pair_sums
        on
            judgments.judge = all_pair_sums.judge
            and judgments.opponent is not distinct from all_pair_sums.opponent
            and judgments.prompt_id = all_pair_sums.prompt_id
)

select * from final
