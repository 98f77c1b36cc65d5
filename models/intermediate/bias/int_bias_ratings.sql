{{ config(materialized='view') }}
-- The rows every OLS bias analysis draws from: positive-frame ratings with a
-- judge and a human score (reference_kind = 'human'), then for each judge
-- family the rows of its llm_reference fit (reference_kind = 'llm'): the
-- reference is the mean normalised score the family's judges gave the
-- completion, the family's judgments and completions are left out, and
-- completions its judges did not rate drop out (inner join). Both parts list
-- the columns of `ratings` in its order. `ratings` is read three times and not
-- materialised: DuckDB would buffer every column of every rating (238 MB at 1M
-- ratings) where the family means need five and the scans are cheap.
with

ratings as {{ not_materialized() }} (
    select
        judge,
        judge_family,
        model,
        model_family,
        is_self,
        is_same_family,
        dimension,
        dataset,
        task_type,
        prompt_id,
        run_id,
        judge_score,
        judge_score_norm as rating,
        human_score_norm as reference,
        length_feature
    from {{ ref('fct_judge_ratings') }}
    where
        framing = 'positive'
        and judge_score_norm is not null
        and human_score_norm is not null
),

family_reference as (
    {{ completion_means('ratings', {'reference_family': 'judge_family'}, 'rating', 'reference') | indent(4) }}
),

human as (
    select
        'human' as reference_kind,
        cast(null as {{ string_type() }}) as reference_family,
        ratings.*
    from ratings
),

llm as (
    select
        'llm' as reference_kind,
        family_reference.reference_family,
        ratings.judge,
        ratings.judge_family,
        ratings.model,
        ratings.model_family,
        ratings.is_self,
        ratings.is_same_family,
        ratings.dimension,
        ratings.dataset,
        ratings.task_type,
        ratings.prompt_id,
        ratings.run_id,
        ratings.judge_score,
        ratings.rating,
        family_reference.reference,
        ratings.length_feature
    from ratings
    {{ family_reference_join('ratings') | indent(4) }}
)

select * from human
union all
select * from llm
