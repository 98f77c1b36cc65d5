-- Alias -> canonical model and family: the user's models file first, then the
-- built-in model_aliases seed, then every canonical name as an alias of itself.
with

user_aliases as (
    select
        alias_key,
        model,
        family,
        1 as priority,
        row_number as source_row
    from {{ ref('int_models_checked') }}
    where reject_code is null
),

seed_aliases as (
    select
        {{ text_key('alias') }} as alias_key,
        model,
        family,
        2 as priority,
        0 as source_row
    from {{ ref('model_aliases') }}
),

declared as (
    select * from user_aliases
    union all
    select * from seed_aliases
),

canonical_names as (
    select
        {{ text_key('model') }} as alias_key,
        model,
        family,
        3 as priority,
        0 as source_row
    from declared
),

all_aliases as (
    select * from declared
    union all
    select * from canonical_names
),

final as (
    select
        alias_key,
        {{ first_by('model', ['priority', 'source_row']) }} as model,
        {{ first_by('family', ['priority', 'source_row']) }} as family,
        case min(priority)
            when 1 then 'models file'
            when 2 then 'model_aliases seed'
            else 'canonical name'
        end as alias_source
    from all_aliases
    group by alias_key
)

select * from final
