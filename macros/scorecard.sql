{% macro scorecard_thresholds() -%}
    {#- The thresholds of judge_scorecard's verdict (docs/scorecard.md, "Judge scorecard"),
        each a dbt var with its default here, its one home:
        min_spearman: a judge whose Spearman upper bound is below it does not
        track humans (avoid); min_accuracy: the same for the accuracy of its
        pairwise verdicts against human verdicts (0.5 is a coin toss);
        max_invalid_rate: the share of unusable outputs above which it is
        avoided; avoid_consistency: a position consistency whose upper bound is
        below it means the verdict follows the slot more often than a coin toss
        would (0.5, a judge picking a slot at random), so the judge is avoided;
        max_ci_width: an agreement interval (Spearman, else pairwise accuracy)
        wider than this cannot tell a weak judge (0.3) from a good one (0.7), so
        the evidence is insufficient; large_bias: a significant self- or
        family-bias at least this large on the [0,1] scale means "avoid for
        self-family models"; min_consistency and min_robustness: a position
        consistency, or a robustness of any bias type, whose upper bound is
        below them asks for debiasing (order swapping, perturbation checks).
        min_term_support is the bias regressions' var (bias_estimates.n_support):
        a self-bias term backed by fewer ratings cannot be decided. -#}
    {{ return({
        'min_spearman': var('scorecard_min_spearman', 0.3),
        'min_accuracy': var('scorecard_min_accuracy', 0.6),
        'max_invalid_rate': var('scorecard_max_invalid_rate', 0.1),
        'avoid_consistency': var('scorecard_avoid_consistency', 0.5),
        'max_ci_width': var('scorecard_max_ci_width', 0.4),
        'large_bias': var('scorecard_large_bias', 0.1),
        'min_consistency': var('scorecard_min_consistency', 0.8),
        'min_robustness': var('scorecard_min_robustness', 0.8),
        'min_term_support': var('min_term_support', 30),
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

{% macro interval_text(value, low, high, digits=2) -%}
    {#- A metric with its interval as text, `0.72 [0.68, 0.76]`, for the
        scorecard's reasons (null when the value is null; `?` for a missing bound). -#}
    {%- set f = "'%." ~ digits ~ "f'" -%}
    printf({{ f }}, {{ value }}) || ' [' || coalesce(printf({{ f }}, {{ low }}), '?') || ', '
    || coalesce(printf({{ f }}, {{ high }}), '?') || ']'
{%- endmacro %}
