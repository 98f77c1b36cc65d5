-- Pairwise judgments, trimmed and cast; verdicts mapped to first, second or tie
-- (macro pairwise_verdict). Row-level reject reasons: malformed records, empty
-- required values, verdicts outside the vocabulary, p_first outside [0, 1],
-- perplexities that are not numbers > 0, a given length_diff that is not a
-- number (an optional column: HiBayes imports). verdict_only_problem flags a row
-- rejected for its verdict alone (a parse failure is data about the judge).
{#- the checks before and after the verdict's: a row failing only the verdict
    check is kept by the pairwise marts as an `invalid` verdict
    (verdict_only_problem) -#}
{% set earlier_checks = [parse_error_check()] + missing_value_checks([
    ('judge', 'judge_alias'), 'prompt_id', ('model_first', 'model_first_alias'),
    ('model_second', 'model_second_alias'), ('verdict', 'verdict_input'),
]) %}
{#- length_diff: an optional extra column (HiBayes imports carry it) -#}
{%- set base = input_table('pairwise_judgments') %}
{%- set has_length_diff = 'length_diff' in (
    adapter.get_columns_in_relation(base) | map(attribute='name') | list
) %}
{% set later_checks = [
    (
        'length_diff_input is not null and coalesce(not ' ~ is_finite('length_diff') ~ ', true)',
        'invalid_value',
        "'length_diff ''' || length_diff_input || ''' is not a number'",
    ),
    (
        'human_verdict_input is not null and human_verdict is null', 'invalid_value',
        "'human_verdict ''' || human_verdict_input || ''' is not first, second"
        ~ " or tie (nor 1, 2, A, B, draw, equal, =)'",
    ),
    (
        'p_first_input is not null and coalesce(p_first not between 0 and 1, true)',
        'invalid_value',
        "'p_first ''' || p_first_input || ''' is not a number between 0 and 1'",
    ),
    (
        'perplexity_first_input is not null and coalesce('
        ~ 'perplexity_first <= 0 or not ' ~ is_finite('perplexity_first') ~ ', true)',
        'invalid_value',
        "'perplexity_first ''' || perplexity_first_input || ''' is not a number > 0'",
    ),
    (
        'perplexity_second_input is not null and coalesce('
        ~ 'perplexity_second <= 0 or not ' ~ is_finite('perplexity_second') ~ ', true)',
        'invalid_value',
        "'perplexity_second ''' || perplexity_second_input"
        ~ " || ''' is not a number > 0'",
    ),
] %}
with

source as (
    select * from {{ base }}
),

renamed as (
    select
        {{ loader_columns(base) }},
        {{ clean_text('judge') }} as judge_alias,
        {{ clean_text('prompt_id') }} as prompt_id,
        {{ clean_text('model_first') }} as model_first_alias,
        {{ clean_text('model_second') }} as model_second_alias,
        {{ clean_text('verdict') }} as verdict_input,
        {{ pairwise_verdict('verdict') }} as verdict,
        {{ clean_text('human_verdict') }} as human_verdict_input,
        {{ pairwise_verdict('human_verdict') }} as human_verdict,
        {{ clean_text('p_first') }} as p_first_input,
        try_cast({{ clean_text('p_first') }} as double) as p_first,
        {{ clean_text('perplexity_first') }} as perplexity_first_input,
        try_cast({{ clean_text('perplexity_first') }} as double) as perplexity_first,
        {{ clean_text('perplexity_second') }} as perplexity_second_input,
        try_cast({{ clean_text('perplexity_second') }} as double) as perplexity_second,
        {% if has_length_diff -%}
            {{ clean_text('length_diff') }} as length_diff_input,
            try_cast({{ clean_text('length_diff') }} as double) as length_diff,
        {%- else -%}
            cast(null as string) as length_diff_input,
            cast(null as double) as length_diff,
        {%- endif %}
        coalesce({{ clean_text('run_id') }}, '1') as run_id
    from source
),

final as (
    select
        *,
        -- an unparseable verdict and nothing else wrong with the row: rejected
        -- (listed in rejected_rows) but kept by pairwise_bias as `invalid`
        (
            verdict_input is not null and verdict is null
            {%- for condition, _code, _reason in earlier_checks + later_checks %}
                and not coalesce({{ condition }}, false)
            {%- endfor %}
        ) as verdict_only_problem,
        {{ reject_columns(
            earlier_checks
            + [
                (
                    'verdict is null', 'invalid_value',
                    "'verdict ''' || verdict_input || ''' is not first, second or tie"
                    ~ " (nor 1, 2, A, B, draw, equal, =)'",
                ),
            ] + later_checks
        ) }}
    from renamed
)

select * from final
