-- The judge version pairs the models file declares: each row whose
-- previous_version names another judge (an alias or a canonical name, resolved
-- like every name) pairs that judge (before) with the row's model (after).
-- judge_drift compares each pair on the items both rated.
with

models as (
    select * from {{ ref('int_models_checked') }}
    where reject_code is null and previous_version is not null
),

aliases as (
    select * from {{ ref('int_model_aliases') }}
),

final as (
    select distinct
        coalesce(aliases.model, models.previous_version) as judge_before,
        models.model as judge_after
    from models
    left join aliases
        on {{ text_key('models.previous_version') }} = aliases.alias_key
)

select * from final
