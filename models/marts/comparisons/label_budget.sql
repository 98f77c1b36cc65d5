-- The rows of int_label_budget_results (computed in Python) with the contract's types.
with

results as (
    select * from {{ ref('int_label_budget_results') }}
),

final as (
    select
        cast(model as {{ string_type() }}) as model,
        cast(dimension as {{ string_type() }}) as dimension,
        cast(target_half_width as double) as target_half_width,
        cast(labels_needed as bigint) as labels_needed,
        cast(labels_needed_human_only as bigint) as labels_needed_human_only,
        cast(labels_saved as bigint) as labels_saved,
        cast(feasible as boolean) as feasible,
        cast(best_half_width as double) as best_half_width,
        cast(best_judge as {{ string_type() }}) as best_judge,
        cast(labels_needed_best_judge as bigint) as labels_needed_best_judge,
        cast(n_labelled as bigint) as n_labelled,
        cast(n_units as bigint) as n_units,
        cast(half_width_now as double) as half_width_now,
        cast(human_only_half_width_now as double) as human_only_half_width_now,
        cast(min_detectable_difference as double) as min_detectable_difference,
        cast(human_only_min_detectable_difference as double) as human_only_min_detectable_difference,
        cast(power as double) as power,
        cast(ci_level as double) as ci_level,
        cast(notes as {{ string_type() }}) as notes
    from results
)

select * from final
