{{ config(enabled=incremental_on()) }}
-- Incremental warehouses only (docs/incremental.md): every load whose rows are in
-- an input (base_inputs__<kind>._load_id) has its row in int_load_scope, the
-- catch-all for a load left unscoped (its prompts' facts would never have been
-- recomputed). A relationships test on the distinct load ids, not on the rows:
-- one aggregate per input, a few load ids each (a single-column scan at 10M).
-- Fails with one row per input and load missing from int_load_scope.
with

loads as (
    {%- for kind in load_kinds() %}
        select distinct
            '{{ kind }}' as input_kind,
            _load_id as load_id
        from {{ input_table(kind) }}
        {%- if not loop.last %}
            union all
        {%- endif %}
    {%- endfor %}
)

select
    loads.input_kind,
    loads.load_id
from loads
where not exists (
    select 1 from {{ ref('int_load_scope') }} as scope
    where scope.load_id is not distinct from loads.load_id
)
