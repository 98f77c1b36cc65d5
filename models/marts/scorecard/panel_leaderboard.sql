-- Each model scored by a panel of judges from other families only (Verga et
-- al. 2024, a panel of LLM evaluators; Play Favorites' advice when no human
-- labels exist), per model x dimension and pooled (`all`), positive frame.
-- Raw: the mean over the panel's judges of each judge's mean normalised score
-- of the model (each judge weighs the same). Debiased: the same mean of each
-- judge's scores mapped onto the human scale with the main fit's terms,
-- (score - judge offset - dimension effect) / judge slope, for the judges
-- whose slope's interval lies above 0 and is no rounded zero (standard error
-- above 0 or |slope| > 1e-9, bias_estimates.significant's rule; a
-- cross-family judge has no self or family term to remove, what remains is
-- its scale). The mean over all
-- judges, same family included, and the human mean stand beside them; every
-- rank is 1 = best, ties share the lower rank. The two panel scores have a 95%
-- interval: each is a weighted mean of ratings (weight 1 / (judges x the
-- judge's ratings)), its variance the prompt-clustered sandwich
-- G / (G - 1) sum_prompts (sum w (score - panel score))^2, as statsmodels' WLS
-- of the score on a constant with cluster-robust errors.
with

-- read twice (judge_sums, completion_sums, through scored) and not materialised: DuckDB
-- would buffer every column of every rating where eight are used and the scan is
-- cheap
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
    -- a slope of standard error 0 (constant scores: an exact fit) is a rounded zero
    -- (-7e-15..6e-14, its interval above 0 by chance) unless |slope| > 1e-9
    -- (judge_bias.bias.regression.EXACT_ZERO_ESTIMATE): no division by it
    where
        term_type = 'judge_slope' and ci_low > 0
        and (std_error > 0 or abs(estimate) > 1e-9)
),

dimension_effects as (
    select
        dimension,
        estimate as dimension_effect
    from main_terms
    where term_type = 'dimension'
),

scored as {{ not_materialized() }} (
    select
        ratings.judge,
        ratings.model,
        ratings.model_family,
        ratings.dimension,
        ratings.prompt_id,
        ratings.judge_score_norm,
        ratings.human_score_norm,
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

-- each judge's sums per dimension, its means, and the pooled row (dimension
-- `all`) added up from them: one scan of the ratings, not two (the means then
-- differ from an avg over the pooled ratings by the order of their additions
-- only, ~1e-16 relative)
judge_sums as (
    select
        judge,
        model,
        model_family,
        dimension,
        is_panel,
        avg(judge_score_norm) as mean_score,
        avg(calibrated_score) as mean_calibrated_score,
        count(*) as n_ratings,
        sum(judge_score_norm) as sum_score,
        sum(calibrated_score) as sum_calibrated_score,
        count(calibrated_score) as n_calibrated
    from scored
    group by judge, model, model_family, dimension, is_panel
),

judge_means_by_dimension as (
    select
        judge,
        model,
        model_family,
        dimension,
        is_panel,
        mean_score,
        mean_calibrated_score,
        n_ratings
    from judge_sums
),

judge_means_pooled as (
    select
        judge,
        model,
        model_family,
        'all' as dimension,
        is_panel,
        sum(sum_score) / sum(n_ratings) as mean_score,
        sum(sum_calibrated_score) / nullif(sum(n_calibrated), 0) as mean_calibrated_score,
        cast(sum(n_ratings) as bigint) as n_ratings
    from judge_sums
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

-- each panel judge's weights in its dimension's row and in the pooled row: a
-- rating's weighted residual (score - panel score) / (judges x the judge's
-- ratings) in both rows
panel_weights as (
    select
        by_dimension.judge,
        by_dimension.model,
        by_dimension.dimension,
        dimension_panel.panel_score,
        dimension_panel.panel_score_debiased,
        dimension_panel.n_panel_judges * by_dimension.n_ratings as weight_denominator,
        dimension_panel.n_debiased_judges * by_dimension.n_ratings
            as weight_denominator_debiased,
        pooled_panel.panel_score as pooled_panel_score,
        pooled_panel.panel_score_debiased as pooled_panel_score_debiased,
        pooled_panel.n_panel_judges * pooled.n_ratings as pooled_weight_denominator,
        pooled_panel.n_debiased_judges * pooled.n_ratings
            as pooled_weight_denominator_debiased
    from judge_means_by_dimension as by_dimension
    inner join judge_means_pooled as pooled
        on by_dimension.judge = pooled.judge and by_dimension.model = pooled.model
    inner join panel as dimension_panel
        on
            by_dimension.model = dimension_panel.model
            and by_dimension.dimension = dimension_panel.dimension
    inner join panel as pooled_panel
        on by_dimension.model = pooled_panel.model and pooled_panel.dimension = 'all'
    where by_dimension.is_panel
),

-- per completion (prompt x model x dimension), in one pass over the ratings: its
-- human score (one per completion: int_human_scores_aggregated's) and the sums of
-- its panel ratings' weighted residuals in its dimension's row and in the pooled
-- row
completion_sums as (
    select
        scored.model,
        scored.dimension,
        scored.prompt_id,
        any_value(scored.human_score_norm) as human_score_norm,
        {%- for name, score, centre in [
            ('residual', 'judge_score_norm', ''),
            ('residual_debiased', 'calibrated_score', '_debiased'),
            ('pooled_residual', 'judge_score_norm', ''),
            ('pooled_residual_debiased', 'calibrated_score', '_debiased'),
        ] %}
            {%- set pooled = 'pooled_' if name.startswith('pooled_') else '' %}
            sum(
                (scored.{{ score }} - panel_weights.{{ pooled }}panel_score{{ centre }})
                / panel_weights.{{ pooled }}weight_denominator{{ centre }}
            ) as {{ name }},
        {%- endfor %}
        count(panel_weights.judge) as n_panel_ratings
    from scored
    left join panel_weights
        on
            scored.judge = panel_weights.judge
            and scored.model = panel_weights.model
            and scored.dimension = panel_weights.dimension
    group by scored.model, scored.dimension, scored.prompt_id
),

-- each completion's human score counted once
human_by_dimension as (
    select
        model,
        dimension,
        avg(human_score_norm) as human_score,
        count(*) as n_human_completions
    from completion_sums
    where human_score_norm is not null
    group by model, dimension
),

human_pooled as (
    select
        model,
        'all' as dimension,
        avg(human_score_norm) as human_score,
        count(*) as n_human_completions
    from completion_sums
    where human_score_norm is not null
    group by model
),

human as (
    select * from human_by_dimension
    union all
    select * from human_pooled
),

-- per prompt with panel ratings, the weighted residuals of its ratings: sum w
-- (score - panel score), in each dimension's row and the pooled row
prompt_residuals as (
    select
        model,
        dimension,
        prompt_id,
        residual,
        residual_debiased
    from completion_sums
    where n_panel_ratings > 0
    union all
    select
        model,
        'all' as dimension,
        prompt_id,
        sum(pooled_residual) as residual,
        sum(pooled_residual_debiased) as residual_debiased
    from completion_sums
    where n_panel_ratings > 0
    group by model, prompt_id
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
