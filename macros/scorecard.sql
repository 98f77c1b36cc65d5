{% macro scorecard_thresholds() -%}
    {#- The thresholds of judge_scorecard's verdict (README, "Judge scorecard"),
        each a dbt var with its default here, its one home:
        min_spearman: a judge whose Spearman upper bound is below it does not
        track humans (avoid); min_accuracy: the same for the accuracy of its
        pairwise verdicts against human verdicts (0.5 is a coin toss); max_invalid_rate: the share of unusable outputs
        above which it is avoided; large_bias: a significant self- or
        family-bias at least this large on the [0,1] scale means "avoid for
        self-family models"; min_consistency and min_robustness: position
        consistency and worst perturbation robustness whose upper bound is
        below them ask for debiasing (order swapping, perturbation checks). -#}
    {{ return({
        'min_spearman': var('scorecard_min_spearman', 0.3),
        'min_accuracy': var('scorecard_min_accuracy', 0.6),
        'max_invalid_rate': var('scorecard_max_invalid_rate', 0.1),
        'large_bias': var('scorecard_large_bias', 0.1),
        'min_consistency': var('scorecard_min_consistency', 0.8),
        'min_robustness': var('scorecard_min_robustness', 0.8),
    }) }}
{%- endmacro %}

{% macro wilson_bound(successes, n, sign) -%}
    {#- A bound of the 95% Wilson score interval of successes / n (sign -1:
        lower, +1: upper); null when n is 0. -#}
    case when {{ n }} > 0 then (
        ({{ successes }} / {{ n }}) + 3.841458820694124 / (2 * {{ n }})
        {{ '-' if sign < 0 else '+' }} 1.959963984540054 * sqrt(
            ({{ successes }} / {{ n }}) * (1 - {{ successes }} / {{ n }}) / {{ n }}
            + 3.841458820694124 / (4 * {{ n }} * {{ n }})
        )
    ) / (1 + 3.841458820694124 / {{ n }}) end
{%- endmacro %}

{% macro invalid_output() -%}
    {#- A judge output that could not be read as a score (int_judge_ratings_checked):
        no final answer in raw_output, a label not on the dimension's scale, a
        number outside it. -#}
    reject_code in ('unparseable_raw_output', 'unknown_label', 'score_out_of_range')
{%- endmacro %}
