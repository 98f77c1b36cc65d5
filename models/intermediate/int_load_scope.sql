{{ config(
    enabled=incremental_on(),
    materialized='incremental',
    incremental_strategy='delete+insert',
    unique_key='load_id',
    on_schema_change='append_new_columns',
) }}
-- One row per load of an incremental warehouse (docs/incremental.md, "The facts:
-- by prompt"): whether the facts must be recomputed for every prompt, and why.
-- A load whose rows all belong to prompts (prompts, completions, human labels,
-- judge ratings with a prompt_id) changes only those prompts' facts; a models or
-- rating_scales row can change every family or score, but only if it changes what
-- the facts read of them: the reference tables' digests (models_digest,
-- scales_digest) then differ from the previous load's (a re-sent identical
-- models.csv, as every importer writes, keeps them); a row without a prompt_id
-- is checked against rows of every prompt, and the first accepted prompt (or the
-- last one rejected) turns the unknown-prompt check on (off) for every rating, and
-- a var the checks read (fact_vars) changes every row's check. A load whose
-- by-prompt models were not all built (facts_done: a killed or failed build, a
-- partial selection) leaves the prompts it touched stale in some of them: the next
-- load recomputes every prompt.
with

-- What the checks and facts read of the models and rating_scales inputs (the
-- aliases, the scales, the accepted labels: macro reference_ctes; every column of
-- int_model_aliases and int_dimension_scales), as one md5 each over the rows
-- sorted: equal whatever the rows' order or load, so a row re-sent as it was
-- changes nothing, and a changed or new row (or a new seed of aliases) changes the
-- digest (a previous load without one, an older warehouse: the full path).
model_rows as (
    select cast(struct_pack(alias_key, model, family, alias_source) as varchar) as reference_row
    from {{ ref('int_model_aliases') }}
),

scale_rows as (
    select
        cast(struct_pack(
            dimension_key, dimension, scale_min, scale_max, n_levels, scale_labels,
            level_of_measurement
        ) as varchar) as reference_row
    from {{ ref('int_dimension_scales') }}
    union all
    select cast(struct_pack(dimension_key, label_key, score, is_na) as varchar) as reference_row
    from {{ ref('int_rating_scales_checked') }}
    where reject_code is null
),

models_digest as (
    select md5(coalesce(string_agg(reference_row, chr(30) order by reference_row), '')) as digest
    from model_rows
),

scales_digest as (
    select md5(coalesce(string_agg(reference_row, chr(30) order by reference_row), '')) as digest
    from scale_rows
),

load as (
    select
        {{ current_load_id() }} as load_id,
        {{ sql_string(tojson(fact_vars())) }} as fact_vars,
        (select digest from models_digest) as models_digest,
        (select digest from scales_digest) as scales_digest
),

accepted_prompts as (
    select count(*) > 0 as has_prompts
    from {{ ref('int_prompts_checked') }}
    where reject_code is null
),

{% if is_incremental() -%}
previous as (
    select
        max(load_number) as load_number,
        arg_max(has_prompts, load_number) as has_prompts,
        arg_max(fact_vars, load_number) as fact_vars,
        arg_max(facts_done, load_number) as facts_done,
        arg_max(models_digest, load_number) as models_digest,
        arg_max(scales_digest, load_number) as scales_digest
    from {{ this }}
    where load_id <> (select load_id from load)
),
{%- else -%}
    previous as (
        select
            0 as load_number,
            cast(null as boolean) as has_prompts,
            cast(null as varchar) as fact_vars,
            cast(null as varchar []) as facts_done,
            cast(null as varchar) as models_digest,
            cast(null as varchar) as scales_digest
    ),
{%- endif %}

reasons as (
    select
        case
            when previous.has_prompts is null then 'the first load'
            when not list_has_all(previous.facts_done, {{ by_prompt_models() | list }})
                then 'the previous load did not build every by-prompt model'
            when coalesce(previous.models_digest, '') <> load.models_digest
                then 'the models (aliases, families) changed'
            when coalesce(previous.scales_digest, '') <> load.scales_digest
                then 'the rating scales changed'
            {%- for kind in prompt_kinds() %}
                when exists (
                    select 1 from {{ input_table(kind) }}
                    where _load_id = (select load_id from load) and {{ clean_text('prompt_id') }} is null
                ) then 'the load has {{ kind }} rows without a prompt_id'
            {%- endfor %}
            when previous.has_prompts <> accepted_prompts.has_prompts
                then 'the accepted prompts went from none to some or back'
            when previous.fact_vars <> load.fact_vars
                then 'the vars of the checks changed: ' || load.fact_vars
        end as full_reason
    from previous
    cross join accepted_prompts
    cross join load
)

select
    load.load_id,
    coalesce(previous.load_number, 0) + 1 as load_number,
    accepted_prompts.has_prompts,
    load.fact_vars,
    load.models_digest,
    load.scales_digest,
    reasons.full_reason is not null as needs_full,
    reasons.full_reason,
    cast([] as varchar []) as facts_done
from load
cross join previous
cross join accepted_prompts
cross join reasons
