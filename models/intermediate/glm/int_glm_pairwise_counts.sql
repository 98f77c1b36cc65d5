-- The pairwise likelihood's count cells: accepted verdicts (first or second)
-- per (judge, ordered pair, length difference, first chosen). The length
-- difference is the input's length_diff column when the file has one (HiBayes
-- imports), else length_first - length_second from completions.
{%- set base = input_table('pairwise_judgments') %}
{%- set base_columns = adapter.get_columns_in_relation(base) | map(attribute='name') | list %}
with

verdicts as (
    select * from {{ ref('int_pairwise_checked') }}
    where reject_code is null and verdict in ('first', 'second')
),

given_lengths as (
    select
        _row_number as row_number,
        {% if 'length_diff' in base_columns -%}
            try_cast(trim(length_diff) as double) as length_diff
        {%- else -%}
            cast(null as double) as length_diff
        {%- endif %}
    from {{ base }}
),

final as (
    select
        verdicts.judge as grader,
        'llm' as grader_type,
        verdicts.model_first,
        verdicts.model_second,
        coalesce(
            given_lengths.length_diff, verdicts.length_first - verdicts.length_second
        ) as length_diff,
        case when verdicts.verdict = 'first' then 1 else 0 end as first_chosen,
        count(*) as n
    from verdicts
    left join given_lengths
        on verdicts.row_number = given_lengths.row_number
    group by all
)

select * from final
