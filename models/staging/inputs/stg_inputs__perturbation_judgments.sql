-- Perturbation judgments, trimmed and cast: verdict, ground_truth, bias_type and
-- condition normalised with text_key (trimmed, lower case, inner whitespace
-- folded), score cast to a number. Row-level reject reasons: malformed records,
-- empty required values, neither verdict nor score, a condition other than
-- original, repeat or perturbed, a score that is not a finite number or lies
-- outside the dbt var score_range, a ground_truth on a score-only row that is
-- not a number or lies outside score_range.
with

source as (
    select * from {{ input_table('perturbation_judgments') }}
),

renamed as (
    select
        {{ loader_columns(input_table('perturbation_judgments')) }},
        {{ clean_text('judge') }} as judge_alias,
        {{ clean_text('item_id') }} as item_id,
        {{ text_key(clean_text('bias_type')) }} as bias_type,
        {{ clean_text('condition') }} as condition_input,
        {{ text_key(clean_text('condition')) }} as condition,
        {{ text_key(clean_text('verdict')) }} as verdict,
        {{ clean_text('score') }} as score_input,
        try_cast({{ clean_text('score') }} as double) as score,
        {{ text_key(clean_text('ground_truth')) }} as ground_truth,
        coalesce({{ clean_text('run_id') }}, '1') as run_id
    from source
),

final as (
    select
        *,
        {{ reject_columns(
            [parse_error_check()]
            + missing_value_checks([
                ('judge', 'judge_alias'), 'item_id', 'bias_type',
                ('condition', 'condition_input'),
            ])
            + [
                (
                    'verdict is null and score_input is null', 'missing_value',
                    "'both verdict and score are empty'",
                ),
                (
                    "condition not in ('original', 'repeat', 'perturbed')", 'invalid_value',
                    "'condition ''' || condition_input || ''' is not original, repeat"
                    ~ " or perturbed'",
                ),
                (
                    'score_input is not null and coalesce(not ' ~ is_finite('score') ~ ', true)',
                    'invalid_value',
                    "'score ''' || score_input || ''' is not a number'",
                ),
                score_range_check('score', 'score_input', 'score'),
                (
                    'verdict is null and ground_truth is not null'
                    ~ ' and try_cast(ground_truth as double) is null',
                    'invalid_value',
                    "'ground_truth ''' || ground_truth || ''' is not a number, as the"
                    ~ " score it is compared with'",
                ),
                score_range_check(
                    'case when verdict is null then try_cast(ground_truth as double) end',
                    'ground_truth', 'ground_truth',
                ),
            ]
        ) }}
    from renamed
)

select * from final
