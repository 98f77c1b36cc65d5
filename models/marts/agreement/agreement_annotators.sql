-- The rows of int_agreement_annotators_results (computed in Python) with the contract's types.
with

results as (
    select * from {{ ref('int_agreement_annotators_results') }}
),

final as (
    select
        cast(dimension as {{ string_type() }}) as dimension,
        cast(n_items as bigint) as n_items,
        cast(n_annotators as bigint) as n_annotators,
        cast(n_labels as bigint) as n_labels,
        cast(observed_agreement as double) as observed_agreement,
        cast(alpha_nominal as double) as alpha_nominal,
        cast(alpha_ordinal as double) as alpha_ordinal,
        cast(alpha_interval as double) as alpha_interval,
        cast(n_gold_items as bigint) as n_gold_items,
        cast(gold_accuracy as double) as gold_accuracy,
        cast(gold_spearman as double) as gold_spearman,
        cast(notes as {{ string_type() }}) as notes,
        cast(level_of_measurement as {{ string_type() }}) as level_of_measurement,
        cast(alpha as double) as alpha
    from results
)

select * from final
