{%- set t = scorecard_thresholds() -%}
-- One row per judge x dimension (and `all`): whether the judge can be trusted,
-- with every metric behind the verdict, its interval and its source mart
-- (int_judge_scorecard_metrics). The rule, in order (README, "Judge
-- scorecard"; thresholds: macro scorecard_thresholds):
--   avoid: the Spearman upper bound is below min_spearman, the pairwise
--     accuracy's upper bound against human verdicts is below min_accuracy, or
--     more than max_invalid_rate of the outputs (ratings or verdicts) cannot
--     be read;
--   avoid for self-family models: a significant self- or family-bias at
--     least large_bias in size;
--   use with debiasing: any significant self- or family-bias, a significant
--     length slope, position consistency or worst robustness whose upper
--     bound is below min_consistency or min_robustness;
--   insufficient evidence: none of these and no agreement with humans known
--     (neither Spearman nor pairwise accuracy);
--   use: otherwise.
with

metrics as (
    select * from {{ ref('int_judge_scorecard_metrics') }}
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
    from metrics
),

final as (
    select
        {{ star_except('', [
            'is_weak_agreement', 'is_weak_pairwise_agreement', 'is_often_invalid',
            'is_often_invalid_pairwise', 'is_large_self_bias', 'is_large_family_bias',
            'is_self_biased', 'is_family_biased', 'is_length_sensitive', 'is_order_sensitive',
            'is_fragile',
        ]) }},
        case
            when
                is_weak_agreement or is_weak_pairwise_agreement
                or is_often_invalid or is_often_invalid_pairwise
                then 'avoid'
            when is_large_self_bias or is_large_family_bias then 'avoid for self-family models'
            when
                is_self_biased or is_family_biased or is_length_sensitive
                or is_order_sensitive or is_fragile
                then 'use with debiasing'
            when spearman is null and pairwise_accuracy is null then 'insufficient evidence'
            else 'use'
        end as verdict,
        nullif(concat_ws(
            '; ',
            case when is_weak_agreement then 'Spearman upper bound below {{ t.min_spearman }}' end,
            case
                when is_weak_pairwise_agreement
                    then 'pairwise accuracy upper bound below {{ t.min_accuracy }}'
            end,
            case
                when is_often_invalid then 'over {{ t.max_invalid_rate }} of outputs unreadable'
            end,
            case
                when is_often_invalid_pairwise
                    then 'over {{ t.max_invalid_rate }} of pairwise verdicts unreadable'
            end,
            case when is_large_self_bias then 'large self-bias' end,
            case when is_large_family_bias then 'large family-bias' end,
            case when is_self_biased and not is_large_self_bias then 'self-bias' end,
            case when is_family_biased and not is_large_family_bias then 'family-bias' end,
            case when is_length_sensitive then 'length slope' end,
            case
                when is_order_sensitive
                    then 'position consistency below {{ t.min_consistency }}'
            end,
            case
                when is_fragile
                    then 'robustness below {{ t.min_robustness }} (' || robustness_bias_type || ')'
            end
        ), '') as verdict_reasons,
        nullif(concat_ws(
            '; ',
            case when spearman is null then 'no judge-human agreement (no human scores)' end,
            case
                when position_consistency is not null and pairwise_accuracy is null
                    then 'no human verdicts on its pairwise judgments'
            end,
            case when self_bias is null then 'no self-bias term (never rates its own model)' end,
            case when family_bias is null then 'no family-bias term for its family' end,
            case when position_consistency is null then 'no pairwise judgments' end,
            case when robustness_rate is null then 'no perturbation judgments' end,
            case when length_slope is null then 'no length-controlled fit (no lengths)' end
        ), '') as notes,
        'avoid if Spearman upper bound < {{ t.min_spearman }}, pairwise accuracy upper '
        || 'bound < {{ t.min_accuracy }} or unreadable outputs or verdicts > '
        || '{{ t.max_invalid_rate }}; avoid for self-family models if a significant self- '
        || 'or family-bias has |estimate| >= {{ t.large_bias }}; use with debiasing if any '
        || 'significant self-, family- or length bias, position consistency upper bound < '
        || '{{ t.min_consistency }} or worst robustness upper bound < {{ t.min_robustness }}; '
        || 'insufficient evidence if neither Spearman nor pairwise accuracy; else use'
            as verdict_rule
    from flags
)

select * from final
