-- Krippendorff's alpha (ordinal) per dimension: observed, on posterior-
-- predictive scores, and counterfactual (grader effects removed), as quantiles.
with

results as (
    select * from {{ ref('int_glm_results') }}
    where output = 'agreement'
),

final as (
    select
        dimension,
        kind,
        model,
        mean,
        q05,
        q25,
        q50,
        q75,
        q95,
        n_draws,
        n_units,
        n_ratings,
        level,
        notes
    from results
)

select * from final
