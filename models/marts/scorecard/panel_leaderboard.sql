-- Each model scored by a panel of judges from other families only (Verga et
-- al. 2024, a panel of LLM evaluators; Play Favorites' advice when no human
-- labels exist), per model x dimension and pooled (`all`), positive frame.
-- Raw: the mean over the panel's judges of each judge's mean normalised score
-- of the model (each judge weighs the same). Debiased: the same mean of each
-- judge's scores mapped onto the human scale with the main fit's terms,
-- (score - judge offset - dimension effect) / judge slope, for the judges
-- whose slope's interval lies above 0 (a cross-family judge has no self or
-- family term to remove; what remains is its scale). The mean over all
-- judges, same family included, and the human mean stand beside them; every
-- rank is 1 = best, ties share the lower rank. The two panel scores have a 95%
-- interval: each is a weighted mean of ratings (weight 1 / (judges x the
-- judge's ratings)), its variance the prompt-clustered sandwich
-- G / (G - 1) sum_prompts (sum w (score - panel score))^2, as statsmodels' WLS
-- of the score on a constant with cluster-robust errors.
with

-- read twice (scored, completions) and not materialised: DuckDB would buffer
-- every column of every rating where seven are used and the scan is cheap
ratings as {{ not_materialized() }} (
    select
        judge,
        judge_family,
        model,
        model_family,
        dimension,
        prompt_id,
        judge_score_norm,
        human_score_norm
    from {{ ref('fct_judge_ratings') }}
    where framing = 'positive' and judge_score_norm is not null
),

main_terms as (
    select * from {{ ref('bias_estimates') }}
    where analysis = 'main' and slice = 'all'
),

offsets as (
    select
        judge,
        estimate as judge_offset
    from main_terms
    where term_type = 'judge_offset'
),

slopes as (
    select
        judge,
        estimate as judge_slope
    from main_terms
    where term_type = 'judge_slope' and ci_low > 0
),

dimension_effects as (
    select
        dimension,
        estimate as dimension_effect
    from main_terms
    where term_type = 'dimension'
),

scored as (
    select
        ratings.judge,
        ratings.model,
        ratings.model_family,
        ratings.dimension,
        ratings.prompt_id,
        ratings.judge_score_norm,
        -- unknown families never make a judge a panel member
        coalesce(ratings.judge_family != ratings.model_family, false) as is_panel,
        (
            ratings.judge_score_norm - offsets.judge_offset
            - coalesce(dimension_effects.dimension_effect, 0)
        ) / slopes.judge_slope as calibrated_score
    from ratings
    left join offsets
        on ratings.judge = offsets.judge
    left join slopes
        on ratings.judge = slopes.judge
    left join dimension_effects
        on ratings.dimension = dimension_effects.dimension
),

judge_means_by_dimension as (
    select
        judge,
        model,
        model_family,
        dimension,
        is_panel,
        avg(judge_score_norm) as mean_score,
        avg(calibrated_score) as mean_calibrated_score,
        count(*) as n_ratings
    from scored
    group by judge, model, model_family, dimension, is_panel
),

judge_means_pooled as (
    select
        judge,
        model,
        model_family,
        'all' as dimension,
        is_panel,
        avg(judge_score_norm) as mean_score,
        avg(calibrated_score) as mean_calibrated_score,
        count(*) as n_ratings
    from scored
    group by judge, model, model_family, is_panel
),

judge_means as (
    select * from judge_means_by_dimension
    union all
    select * from judge_means_pooled
),

panel as (
    select
        model,
        model_family,
        dimension,
        count(*) filter (where is_panel) as n_panel_judges,
        {{ ordered_string_agg('judge', ', ', 'judge', where='is_panel') }} as panel_judges,
        count(*) filter (where not is_panel) as n_excluded_judges,
        sum(n_ratings) filter (where is_panel) as n_panel_ratings,
        avg(mean_score) filter (where is_panel) as panel_score,
        count(mean_calibrated_score) filter (where is_panel) as n_debiased_judges,
        avg(mean_calibrated_score) filter (where is_panel) as panel_score_debiased,
        avg(mean_score) as all_judges_score
    from judge_means
    group by model, model_family, dimension
),

-- each completion's human score counted once
completions as (
    select distinct
        prompt_id,
        model,
        dimension,
        human_score_norm
    from ratings
    where human_score_norm is not null
),

human_by_dimension as (
    select
        model,
        dimension,
        avg(human_score_norm) as human_score,
        count(*) as n_human_completions
    from completions
    group by model, dimension
),

human_pooled as (
    select
        model,
        'all' as dimension,
        avg(human_score_norm) as human_score,
        count(*) as n_human_completions
    from completions
    group by model
),

human as (
    select * from human_by_dimension
    union all
    select * from human_pooled
),

-- each panel rating in its dimension's row and the pooled row
panel_ratings as (
    select
        judge,
        model,
        dimension,
        prompt_id,
        judge_score_norm,
        calibrated_score
    from scored
    where is_panel
    union all
    select
        judge,
        model,
        'all' as dimension,
        prompt_id,
        judge_score_norm,
        calibrated_score
    from scored
    where is_panel
),

-- per prompt, the weighted residuals of its ratings: sum w (score - panel score)
prompt_residuals as (
    select
        panel_ratings.model,
        panel_ratings.dimension,
        panel_ratings.prompt_id,
        sum(
            (panel_ratings.judge_score_norm - panel.panel_score)
            / (panel.n_panel_judges * judge_means.n_ratings)
        ) as residual,
        sum(
            (panel_ratings.calibrated_score - panel.panel_score_debiased)
            / (panel.n_debiased_judges * judge_means.n_ratings)
        ) as residual_debiased
    from panel_ratings
    inner join judge_means
        on
            panel_ratings.judge = judge_means.judge
            and panel_ratings.model = judge_means.model
            and panel_ratings.dimension = judge_means.dimension
            and judge_means.is_panel
    inner join panel
        on panel_ratings.model = panel.model and panel_ratings.dimension = panel.dimension
    group by panel_ratings.model, panel_ratings.dimension, panel_ratings.prompt_id
),

panel_errors as (
    select
        model,
        dimension,
        count(*) as n_panel_prompts,
        case
            when count(*) > 1 then sqrt(count(*) / (count(*) - 1) * sum(residual * residual))
        end as panel_score_se,
        case
            when count(residual_debiased) > 1
                then sqrt(
                    count(residual_debiased) / (count(residual_debiased) - 1)
                    * sum(residual_debiased * residual_debiased)
                )
        end as panel_score_debiased_se
    from prompt_residuals
    group by model, dimension
),

joined as (
    select
        panel.*,
        panel_errors.n_panel_prompts,
        panel_errors.panel_score_se,
        panel_errors.panel_score_debiased_se,
        human.human_score,
        human.n_human_completions
    from panel
    left join panel_errors
        on panel.model = panel_errors.model and panel.dimension = panel_errors.dimension
    left join human
        on panel.model = human.model and panel.dimension = human.dimension
),

final as (
    select
        model,
        model_family,
        dimension,
        n_panel_judges,
        panel_judges,
        n_excluded_judges,
        n_panel_ratings,
        coalesce(n_panel_prompts, 0) as n_panel_prompts,
        panel_score,
        panel_score_se,
        panel_score - 1.959963984540054 * panel_score_se as panel_score_ci_low,
        panel_score + 1.959963984540054 * panel_score_se as panel_score_ci_high,
        case when panel_score is not null then rank() over (
            partition by dimension order by panel_score desc nulls last
        ) end as panel_rank,
        n_debiased_judges,
        panel_score_debiased,
        panel_score_debiased_se,
        panel_score_debiased - 1.959963984540054 * panel_score_debiased_se
            as panel_score_debiased_ci_low,
        panel_score_debiased + 1.959963984540054 * panel_score_debiased_se
            as panel_score_debiased_ci_high,
        case when panel_score_debiased is not null then rank() over (
            partition by dimension order by panel_score_debiased desc nulls last
        ) end as panel_debiased_rank,
        all_judges_score,
        rank() over (partition by dimension order by all_judges_score desc) as all_judges_rank,
        human_score,
        case when human_score is not null then rank() over (
            partition by dimension order by human_score desc nulls last
        ) end as human_rank,
        n_human_completions,
        case
            when n_panel_judges = 0 then 'no judge of another family rated the model'
            when n_debiased_judges = 0
                then 'no panel judge with a main-fit slope above 0: no debiased score'
        end as notes
    from joined
)

select * from final
