{%- set t = scorecard_thresholds() -%}
-- Every scorecard metric of a judge x dimension (and `all`), joined from the
-- mart it comes from; judge_scorecard adds the verdict. Judge-level sources
-- (counterfactual alpha, length slope, pairwise and perturbation metrics)
-- repeat on the judge's dimension rows. A missing input gives nulls. Agreement
-- with humans is the Spearman correlation of scores (ratings) and the accuracy
-- of verdicts against human verdicts (pairwise judgments).
with

ratings as (
    select * from {{ ref('fct_judge_ratings') }}
),

checked as (
    select * from {{ ref('int_judge_ratings_checked') }}
),

correlations as (
    select * from {{ ref('agreement_judge_human') }}
),

counterfactual as (
    select * from {{ ref('agreement_counterfactual') }}
),

scales as (
    select * from {{ ref('int_dimension_scales') }}
),

estimates as (
    select * from {{ ref('bias_estimates') }}
),

pairwise as (
    select * from {{ ref('pairwise_bias') }}
    where opponent = 'all'
),

perturbation as (
    select * from {{ ref('perturbation_bias') }}
),

families as (
    select
        judge,
        min(judge_family) as judge_family
    from ratings
    group by judge
),

judges as (
    select judge from families
    union
    select judge from pairwise
    union
    select judge from perturbation
),

spine as (
    select distinct
        judge,
        dimension
    from ratings
    union
    select
        judge,
        'all' as dimension
    from judges
),

-- self- and family-bias of the main specification: the main fit for `all`,
-- the by_dimension fit of the dimension on a dimension's row
bias_terms as (
    select
        case when analysis = 'main' then 'all' else slice end as dimension,
        term_type,
        judge,
        family,
        estimate,
        ci_low,
        ci_high,
        ci_level,
        significant,
        n_support,
        analysis
    from estimates
    where
        term_type in ('self', 'family')
        and (analysis = 'main' or analysis = 'by_dimension')
),

length_terms as (
    select
        judge,
        estimate,
        ci_low,
        ci_high,
        significant
    from estimates
    where analysis = 'length_controlled' and term_type = 'length'
),

-- the bias type whose robustness is most surely low (lowest upper bound; ties:
-- lowest rate, then by name): its upper bound is below a threshold exactly when
-- some type's is, so the verdict tests every type, not the lowest point rate
worst_perturbation as (
    select
        judge,
        bias_type,
        robustness_rate,
        robustness_rate_ci_low,
        robustness_rate_ci_high
    from perturbation
    where robustness_rate is not null
    qualify row_number() over (
        partition by judge
        order by robustness_rate_ci_high asc nulls last, robustness_rate asc, bias_type asc
    ) = 1
),

-- the judge's dimensions on a nominal scale (rating_scales.scale_level):
-- agreement_counterfactual's alpha is interval alpha pooled over the judge's
-- dimensions, which treats nominal codes 0..k-1 as distances, so it is not shown
rated_dimensions as (
    select distinct
        judge,
        dimension
    from ratings
),

nominal_dimensions as (
    select
        rated.judge,
        string_agg(rated.dimension, ', ' order by rated.dimension) as nominal_dimensions
    from rated_dimensions as rated
    inner join scales
        on rated.dimension = scales.dimension
    where scales.level_of_measurement = 'nominal'
    group by rated.judge
),

-- every bias type whose robustness upper bound is below min_robustness, named
-- with its rate and interval (lowest upper bound first)
fragile_types as (
    select
        judge,
        count(*) as n_fragile_bias_types,
        string_agg(
            bias_type || ' ' || printf(
                '%.2f [%.2f, %.2f]',
                robustness_rate,
                robustness_rate_ci_low,
                robustness_rate_ci_high
            ),
            '; '
            order by robustness_rate_ci_high, bias_type
        ) as fragile_bias_types
    from perturbation
    where robustness_rate_ci_high < {{ t.min_robustness }}
    group by judge
),

perturbation_counts as (
    select
        judge,
        count(robustness_rate) as n_perturbation_bias_types
    from perturbation
    group by judge
),

-- the judge's ratings of its own model: a self-bias term is a question only
-- for a judge that rates its own model
self_ratings_by_dimension as (
    select
        judge,
        dimension,
        count(*) filter (where is_self) as n_self_ratings
    from ratings
    group by judge, dimension
),

self_ratings as (
    select * from self_ratings_by_dimension
    union all
    select
        judge,
        'all' as dimension,
        sum(n_self_ratings) as n_self_ratings
    from self_ratings_by_dimension
    group by judge
),

outputs_by_dimension as (
    select
        judge,
        dimension,
        count(*) as n_outputs,
        count(*) filter (where {{ invalid_output() }}) as n_invalid
    from checked
    where judge is not null and dimension is not null
    group by judge, dimension
),

outputs_pooled as (
    select
        judge,
        'all' as dimension,
        count(*) as n_outputs,
        count(*) filter (where {{ invalid_output() }}) as n_invalid
    from checked
    where judge is not null
    group by judge
),

output_rates as (
    select * from outputs_by_dimension
    union all
    select * from outputs_pooled
),

final as (
    select
        spine.judge,
        families.judge_family,
        spine.dimension,
        correlations.n as n_rated,
        correlations.spearman,
        correlations.spearman_ci_low,
        correlations.spearman_ci_high,
        case when correlations.spearman is not null then 'agreement_judge_human' end
            as spearman_source,
        case
            when nominal_dimensions.judge is null then counterfactual.alpha_observed
        end as alpha,
        case
            when nominal_dimensions.judge is null then counterfactual.alpha_observed_ci_low
        end as alpha_ci_low,
        case
            when nominal_dimensions.judge is null then counterfactual.alpha_observed_ci_high
        end as alpha_ci_high,
        case
            when nominal_dimensions.judge is null and counterfactual.alpha_observed is not null
                then 'agreement_counterfactual'
        end as alpha_source,
        case
            when nominal_dimensions.judge is null and counterfactual.alpha_observed is not null
                then 'interval'
        end as alpha_level,
        nominal_dimensions.nominal_dimensions as alpha_withheld_nominal_dimensions,
        self_terms.estimate as self_bias,
        self_terms.ci_low as self_bias_ci_low,
        self_terms.ci_high as self_bias_ci_high,
        self_terms.significant as self_bias_significant,
        self_terms.n_support as self_bias_n_support,
        coalesce(self_ratings.n_self_ratings, 0) as n_self_ratings,
        case when self_terms.estimate is not null then 'bias_estimates:' || self_terms.analysis end
            as self_bias_source,
        family_terms.estimate as family_bias,
        family_terms.ci_low as family_bias_ci_low,
        family_terms.ci_high as family_bias_ci_high,
        family_terms.significant as family_bias_significant,
        case
            when family_terms.estimate is not null then 'bias_estimates:' || family_terms.analysis
        end as family_bias_source,
        coalesce(self_terms.ci_level, family_terms.ci_level) as bias_ci_level,
        length_terms.estimate as length_slope,
        length_terms.ci_low as length_slope_ci_low,
        length_terms.ci_high as length_slope_ci_high,
        length_terms.significant as length_slope_significant,
        case
            when length_terms.estimate is not null then 'bias_estimates:length_controlled'
        end as length_slope_source,
        pairwise.position_consistency,
        pairwise.position_consistency_ci_low,
        pairwise.position_consistency_ci_high,
        pairwise.first_slot_rate,
        pairwise.first_slot_rate_ci_low,
        pairwise.first_slot_rate_ci_high,
        case when pairwise.judge is not null then 'pairwise_bias' end as pairwise_source,
        pairwise.n_human_judgments as n_pairwise_human,
        pairwise.accuracy as pairwise_accuracy,
        pairwise.accuracy_ci_low as pairwise_accuracy_ci_low,
        pairwise.accuracy_ci_high as pairwise_accuracy_ci_high,
        pairwise.kappa as pairwise_kappa,
        pairwise.invalid_rate as pairwise_invalid_rate,
        pairwise.invalid_rate_ci_low as pairwise_invalid_rate_ci_low,
        pairwise.invalid_rate_ci_high as pairwise_invalid_rate_ci_high,
        worst_perturbation.robustness_rate,
        worst_perturbation.robustness_rate_ci_low,
        worst_perturbation.robustness_rate_ci_high,
        worst_perturbation.bias_type as robustness_bias_type,
        perturbation_counts.n_perturbation_bias_types,
        coalesce(fragile_types.n_fragile_bias_types, 0) as n_fragile_bias_types,
        fragile_types.fragile_bias_types,
        case when worst_perturbation.judge is not null then 'perturbation_bias' end
            as robustness_source,
        output_rates.n_outputs,
        output_rates.n_invalid,
        output_rates.n_invalid / output_rates.n_outputs as invalid_output_rate,
        {{ wilson_bound('output_rates.n_invalid', 'output_rates.n_outputs', -1) }}
            as invalid_output_rate_ci_low,
        {{ wilson_bound('output_rates.n_invalid', 'output_rates.n_outputs', 1) }}
            as invalid_output_rate_ci_high,
        case when output_rates.n_outputs is not null then 'int_judge_ratings_checked' end
            as invalid_output_source
    from spine
    left join families
        on spine.judge = families.judge
    left join correlations
        on spine.judge = correlations.judge and spine.dimension = correlations.dimension
    left join counterfactual
        on spine.judge = counterfactual.judge
    left join nominal_dimensions
        on spine.judge = nominal_dimensions.judge
    left join bias_terms as self_terms
        on
            self_terms.term_type = 'self'
            and spine.judge = self_terms.judge
            and spine.dimension = self_terms.dimension
    left join bias_terms as family_terms
        on
            family_terms.term_type = 'family'
            and families.judge_family = family_terms.family
            and spine.dimension = family_terms.dimension
    left join length_terms
        on spine.judge = length_terms.judge
    left join pairwise
        on spine.judge = pairwise.judge
    left join worst_perturbation
        on spine.judge = worst_perturbation.judge
    left join perturbation_counts
        on spine.judge = perturbation_counts.judge
    left join fragile_types
        on spine.judge = fragile_types.judge
    left join self_ratings
        on spine.judge = self_ratings.judge and spine.dimension = self_ratings.dimension
    left join output_rates
        on spine.judge = output_rates.judge and spine.dimension = output_rates.dimension
)

select * from final
