-- Every row of the user's models file with its reject reason.
with

models as (
    select * from {{ ref('stg_inputs__models') }}
),

keyed as (
    select
        *,
        {{ text_key('alias') }} as alias_key
    from models
),

final as (
    {{ flag_duplicates('keyed', ['alias_key'], 'alias') }}
)

select * from final
