{{ config(incremental_by_prompt('run_id')) -}}
{{ load_prompt_dependencies() -}}
-- One row per accepted judge rating: judge x prompt x model x dimension x
-- framing x run, with the human reference, families and length beside it.
with

ratings as (
    select * from {{ ref('int_judge_ratings_checked') }}
    where reject_code is null{% if is_incremental() %} and {{ load_prompt_condition('prompt_id', 'run_id') }}{% endif %}
),

human as (
    select * from {{ ref('int_human_scores_aggregated') }}
),

lengths as (
    select * from {{ ref('int_completion_lengths') }}
),

prompts as (
    select * from {{ ref('int_prompts_checked') }}
    where reject_code is null
),

final as (
    select
        ratings.judge,
        ratings.judge_family,
        ratings.model,
        ratings.model_family,
        ratings.prompt_id,
        prompts.dataset,
        prompts.task_type,
        ratings.dimension,
        ratings.framing,
        ratings.run_id,
        ratings.judge_score,
        {{ normalised('ratings.judge_score', 'ratings.scale_min', 'ratings.scale_max') }}
            as judge_score_norm,
        ratings.is_na as is_na_label,
        ratings.answer_source,
        ratings.score_source,
        human.human_score_mean as human_score,
        {{ normalised('human.human_score_mean', 'ratings.scale_min', 'ratings.scale_max') }}
            as human_score_norm,
        human.human_score_sd,
        cast(coalesce(human.n_annotators, 0) as integer) as n_annotators,
        coalesce(human.is_pre_aggregated, false) as is_human_pre_aggregated,
        ratings.judge = ratings.model as is_self,
        ratings.judge_family = ratings.model_family
        and ratings.judge <> ratings.model as is_same_family,
        lengths.length_tokens,
        lengths.length_feature,
        ratings.scale_min,
        ratings.scale_max,
        ratings.row_number as source_row_number
    from ratings
    left join human
        on
            ratings.prompt_id = human.prompt_id
            and ratings.model = human.model
            and ratings.dimension = human.dimension
    left join lengths
        on
            ratings.prompt_id = lengths.prompt_id
            and ratings.model = lengths.model
    left join prompts
        on ratings.prompt_id = prompts.prompt_id
)

select * from final
