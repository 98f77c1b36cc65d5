{%- set t = scorecard_thresholds() -%}
-- One row per judge x dimension (and `all`): whether the judge can be trusted,
-- with every metric behind the verdict, its interval and its source mart
-- (int_judge_scorecard_metrics). The rule, first branch that applies (docs/scorecard.md,
-- "Judge scorecard"; thresholds: macro scorecard_thresholds, their one home):
--   avoid: the Spearman upper bound is below min_spearman, the pairwise
--     accuracy's upper bound against human verdicts is below min_accuracy,
--     more than max_invalid_rate of the outputs (ratings or verdicts) cannot
--     be read, or the position consistency's upper bound is below
--     avoid_consistency (the verdict follows the slot);
--   insufficient evidence: no agreement with humans narrow enough to decide
--     (neither a Spearman nor a pairwise accuracy interval at most
--     max_ci_width wide), or a judge that rates its own model without a
--     self-bias term backed by min_term_support ratings;
--   avoid for self-family models: a significant self- or family-bias at
--     least large_bias in size;
--   use with debiasing: any significant self- or family-bias, a significant
--     length slope, a position consistency or the robustness of any bias type
--     whose upper bound is below min_consistency or min_robustness;
--   use: otherwise.
-- A missing metric never passes a test it cannot pass: missing agreement or
-- self-bias evidence is `insufficient evidence`, not `use`.
with

metrics as (
    select * from {{ ref('int_judge_scorecard_metrics') }}
),

widths as (
    select
        *,
        spearman_ci_high - spearman_ci_low as spearman_ci_width,
        pairwise_accuracy_ci_high - pairwise_accuracy_ci_low as pairwise_accuracy_ci_width
    from metrics
),

flags as (
    select
        *,
        coalesce(spearman_ci_high < {{ t.min_spearman }}, false) as is_weak_agreement,
        coalesce(
            pairwise_accuracy_ci_high < {{ t.min_accuracy }}, false
        ) as is_weak_pairwise_agreement,
        coalesce(invalid_output_rate > {{ t.max_invalid_rate }}, false) as is_often_invalid,
        coalesce(
            pairwise_invalid_rate > {{ t.max_invalid_rate }}, false
        ) as is_often_invalid_pairwise,
        coalesce(
            position_consistency_ci_high < {{ t.avoid_consistency }}, false
        ) as is_slot_driven,
        not coalesce(
            spearman_ci_width <= {{ t.max_ci_width }}
            or pairwise_accuracy_ci_width <= {{ t.max_ci_width }},
            false
        ) as is_agreement_undecided,
        n_self_ratings > 0
        and coalesce(self_bias_n_support < {{ t.min_term_support }}, true)
            as is_self_bias_undecided,
        coalesce(
            self_bias_significant and abs(self_bias) >= {{ t.large_bias }}, false
        ) as is_large_self_bias,
        coalesce(
            family_bias_significant and abs(family_bias) >= {{ t.large_bias }}, false
        ) as is_large_family_bias,
        coalesce(self_bias_significant, false) as is_self_biased,
        coalesce(family_bias_significant, false) as is_family_biased,
        coalesce(length_slope_significant, false) as is_length_sensitive,
        coalesce(
            position_consistency_ci_high < {{ t.min_consistency }}, false
        ) as is_order_sensitive,
        coalesce(robustness_rate_ci_high < {{ t.min_robustness }}, false) as is_fragile
    from widths
),

final as (
    select
        {{ star_except('', [
            'is_weak_agreement', 'is_weak_pairwise_agreement', 'is_often_invalid',
            'is_often_invalid_pairwise', 'is_slot_driven', 'is_agreement_undecided',
            'is_self_bias_undecided', 'is_large_self_bias', 'is_large_family_bias',
            'is_self_biased', 'is_family_biased', 'is_length_sensitive', 'is_order_sensitive',
            'is_fragile',
        ]) }},
        case
            when
                is_weak_agreement or is_weak_pairwise_agreement
                or is_often_invalid or is_often_invalid_pairwise or is_slot_driven
                then 'avoid'
            when is_agreement_undecided or is_self_bias_undecided then 'insufficient evidence'
            when is_large_self_bias or is_large_family_bias then 'avoid for self-family models'
            when
                is_self_biased or is_family_biased or is_length_sensitive
                or is_order_sensitive or is_fragile
                then 'use with debiasing'
            else 'use'
        end as verdict,
        nullif(concat_ws(
            '; ',
            case
                when is_weak_agreement
                    then
                        'Spearman ' || {{ interval_text('spearman', 'spearman_ci_low', 'spearman_ci_high') }}
                        || ': upper bound below {{ t.min_spearman }}'
            end,
            case
                when is_weak_pairwise_agreement
                    then
                        'pairwise accuracy '
                        || {{ interval_text(
                            'pairwise_accuracy', 'pairwise_accuracy_ci_low', 'pairwise_accuracy_ci_high'
                        ) }}
                        || ': upper bound below {{ t.min_accuracy }}'
            end,
            case
                when is_often_invalid
                    then
                        printf('%.1f%%', 100 * invalid_output_rate)
                        || ' of outputs unreadable, over {{ t.max_invalid_rate }}'
            end,
            case
                when is_often_invalid_pairwise
                    then
                        printf('%.1f%%', 100 * pairwise_invalid_rate)
                        || ' of pairwise verdicts unreadable, over {{ t.max_invalid_rate }}'
            end,
            case
                when is_slot_driven
                    then
                        'position consistency '
                        || {{ interval_text(
                            'position_consistency',
                            'position_consistency_ci_low',
                            'position_consistency_ci_high',
                            3,
                        ) }}
                        || ': upper bound below {{ t.avoid_consistency }}, the verdict follows the slot ('
                        || printf('%.1f%%', 100 * first_slot_rate) || ' first slot)'
            end,
            case
                when spearman is null and pairwise_accuracy is null
                    then 'no agreement with humans (no Spearman, no pairwise accuracy)'
                when spearman_ci_width is null and pairwise_accuracy_ci_width is null
                    then 'no interval for the agreement with humans (too few ratings)'
                when is_agreement_undecided
                    then
                        'agreement interval too wide to decide ('
                        || concat_ws(
                            ', ',
                            'Spearman ' || printf('%.2f', spearman_ci_width),
                            'pairwise accuracy ' || printf('%.2f', pairwise_accuracy_ci_width)
                        ) || ' wide, over {{ t.max_ci_width }})'
            end,
            case
                when is_self_bias_undecided
                    then
                        'self-bias undecided: ' || n_self_ratings
                        || ' ratings of its own model, '
                        || coalesce(self_bias_n_support::varchar, 'none') || ' behind a self-bias term'
                        || ' (min_term_support {{ t.min_term_support }})'
            end,
            case
                when is_self_biased
                    then
                        case when is_large_self_bias then 'large ' else '' end || 'self-bias '
                        || {{ interval_text('self_bias', 'self_bias_ci_low', 'self_bias_ci_high', 3) }}
            end,
            case
                when is_family_biased
                    then
                        case when is_large_family_bias then 'large ' else '' end
                        || 'family-bias (' || judge_family || ') '
                        || {{ interval_text('family_bias', 'family_bias_ci_low', 'family_bias_ci_high', 3) }}
            end,
            case
                when is_length_sensitive
                    then
                        'length slope '
                        || {{ interval_text('length_slope', 'length_slope_ci_low', 'length_slope_ci_high', 3) }}
            end,
            case
                when is_order_sensitive and not is_slot_driven
                    then
                        'position consistency '
                        || {{ interval_text(
                            'position_consistency',
                            'position_consistency_ci_low',
                            'position_consistency_ci_high',
                        ) }}
                        || ': upper bound below {{ t.min_consistency }}'
            end,
            case
                when is_fragile
                    then
                        'robustness upper bound below {{ t.min_robustness }} for '
                        || n_fragile_bias_types || ' of ' || n_perturbation_bias_types
                        || ' bias types: ' || fragile_bias_types
            end
        ), '') as verdict_reasons,
        nullif(concat_ws(
            '; ',
            case when spearman is null then 'no judge-human agreement (no human scores)' end,
            case
                when alpha_withheld_nominal_dimensions is not null
                    then
                        'no alpha: agreement_counterfactual''s interval alpha would treat the '
                        || 'nominal dimension(s) ' || alpha_withheld_nominal_dimensions
                        || ' as numbers'
            end,
            case
                when position_consistency is not null and pairwise_accuracy is null
                    then 'no human verdicts on its pairwise judgments'
            end,
            case
                when self_bias is null and n_self_ratings = 0
                    then 'no self-bias term (never rates its own model)'
            end,
            case when family_bias is null then 'no family-bias term for its family' end,
            case when position_consistency is null then 'no pairwise judgments' end,
            case when robustness_rate is null then 'no perturbation judgments' end,
            case when length_slope is null then 'no length-controlled fit (no lengths)' end
        ), '') as notes,
        'avoid if Spearman upper bound < {{ t.min_spearman }}, pairwise accuracy upper '
        || 'bound < {{ t.min_accuracy }}, unreadable outputs or verdicts > '
        || '{{ t.max_invalid_rate }} or position consistency upper bound < '
        || '{{ t.avoid_consistency }}; insufficient evidence if no Spearman or pairwise '
        || 'accuracy interval at most {{ t.max_ci_width }} wide, or the judge rates its own '
        || 'model without a self-bias term on >= {{ t.min_term_support }} ratings; avoid for '
        || 'self-family models if a significant self- or family-bias has |estimate| >= '
        || '{{ t.large_bias }}; use with debiasing if any significant self-, family- or '
        || 'length bias, position consistency upper bound < {{ t.min_consistency }} or the '
        || 'robustness upper bound of any bias type < {{ t.min_robustness }}; else use'
            as verdict_rule
    from flags
)

select * from final
