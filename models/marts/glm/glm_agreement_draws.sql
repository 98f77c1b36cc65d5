-- Krippendorff's alpha per posterior draw (posterior and counterfactual), the
-- values glm_agreement summarises as quantiles.
with

results as (
    select * from {{ ref('int_glm_results') }}
    where output = 'agreement_draws'
),

final as (
    select
        dimension,
        kind,
        model,
        draw,
        alpha
    from results
)

select * from final
