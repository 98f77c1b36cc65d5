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
-- rating_scales row changes every prompt whose rows use a name (an alias, a
-- dimension) whose resolution it changes (changed_names: a re-sent identical
-- models.csv, as every importer writes, changes none, and neither does a new
-- model or dimension no earlier row names); a row without a prompt_id
-- is checked against rows of every prompt, and the first accepted prompt (or the
-- last one rejected) turns the unknown-prompt check on (off) for every rating, and
-- a var the checks read (fact_vars) changes every row's check. A load whose
-- by-prompt models were not all built (facts_done: a killed or failed build, a
-- partial selection) leaves the prompts it touched stale in some of them: the next
-- load recomputes every prompt.
with

-- What the checks and facts read of the models and rating_scales inputs (macro
-- reference_ctes: the aliases; the scales and accepted labels), one row per
-- reference row with the name it resolves (name_key: an alias or a dimension, as
-- text_key matches it). The load keeps them (model_rows, scale_rows); the names
-- whose rows differ from the previous load's (changed_names: new, gone or other
-- values, whatever the rows' order) change the facts of the ratings, labels and
-- completions that use them, and only those.
model_rows as (
    select
        'model' as kind,
        alias_key as name_key,
        cast(struct_pack(alias_key, model, family, alias_source) as varchar) as reference_row
    from {{ ref('int_model_aliases') }}
),

scale_rows as (
    select
        'dimension' as kind,
        dimension_key as name_key,
        cast(struct_pack(
            dimension_key, dimension, scale_min, scale_max, n_levels, scale_labels,
            level_of_measurement
        ) as varchar) as reference_row
    from {{ ref('int_dimension_scales') }}
    union all
    select
        'dimension' as kind,
        dimension_key as name_key,
        cast(struct_pack(dimension_key, label_key, score, is_na) as varchar) as reference_row
    from {{ ref('int_rating_scales_checked') }}
    where reject_code is null
),

load as (
    select
        {{ current_load_id() }} as load_id,
        {{ sql_string(tojson(fact_vars())) }} as fact_vars,
        -- [] when there are none (list() of no rows is null, which reads as a load
        -- that kept no reference rows: the full path every time)
        coalesce((
            select list(struct_pack(kind, name_key, reference_row) order by reference_row)
            from model_rows
        ), []) as model_rows,
        coalesce((
            select list(struct_pack(kind, name_key, reference_row) order by reference_row)
            from scale_rows
        ), []) as scale_rows
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
        arg_max(model_rows, load_number) as model_rows,
        arg_max(scale_rows, load_number) as scale_rows
    from {{ this }}
    where load_id <> (select load_id from load)
),
{%- else -%}
    previous as (
        select
            0 as load_number,
            cast(null as boolean) as has_prompts,
            cast(null as varchar) as fact_vars,
            cast(null as varchar[]) as facts_done,
            cast(null as struct(kind varchar, name_key varchar, reference_row varchar)[]) as model_rows,
            cast(null as struct(kind varchar, name_key varchar, reference_row varchar)[]) as scale_rows
    ),
{%- endif %}

reference_now as (
    select unnest(list_concat(model_rows, scale_rows)) as reference from load
),

reference_before as (
    select unnest(list_concat(model_rows, scale_rows)) as reference from previous
),

changed_names as (
    select distinct
        changed.reference.kind,
        changed.reference.name_key
    from (
        (
            select reference from reference_now
            except
            select reference from reference_before
        )
        union all
        (
            select reference from reference_before
            except
            select reference from reference_now
        )
    ) as changed
),

-- The names the rows of earlier loads resolve (their ratings' judges, models and
-- dimensions, their labels' models and dimensions, their completions' models)
earlier_names as (
    select distinct
        kind,
        {{ text_key('name') }} as name_key
    from (
        {%- for kind, columns in {
            'judge_ratings': [('model', 'judge'), ('model', 'model'), ('dimension', 'dimension')],
            'human_annotations': [('model', 'model'), ('dimension', 'dimension')],
            'completions': [('model', 'model')],
        }.items() %}
            {%- for name_kind, column in columns %}
                select distinct
                    '{{ name_kind }}' as kind,
                    {{ clean_text(column) }} as name
                from {{ input_table(kind) }}
                where _load_id <> (select load_id from load)
                {%- if not loop.last %}
                    union
                {%- endif %}
            {%- endfor %}
            {%- if not loop.last %}
                union
            {%- endif %}
        {%- endfor %}
    )
),

reasons as (
    select
        case
            when previous.has_prompts is null then 'the first load'
            when not list_has_all(previous.facts_done, {{ by_prompt_models() | list }})
                then 'the previous load did not build every by-prompt model'
            when previous.model_rows is null or previous.scale_rows is null
                then 'the previous load kept no reference rows'
            {%- for kind, reason in [
                ('model', 'the models changed for names of earlier loads'),
                ('dimension', 'the rating scales changed for dimensions of earlier loads'),
            ] %}
                when exists (
                    select 1 from changed_names
                    inner join earlier_names
                        on
                            changed_names.kind = earlier_names.kind
                            and changed_names.name_key = earlier_names.name_key
                    where changed_names.kind = '{{ kind }}'
                ) then '{{ reason }}'
            {%- endfor %}
            {%- for kind in prompt_kinds() %}
                when exists (
                    select 1 from {{ input_table(kind) }}
                    where _load_id = (select load_id from load) and {{ clean_text('prompt_id') }} is null
                ) then 'the load has {{ kind }} rows without a prompt_id'
            {%- endfor %}
            when previous.has_prompts <> accepted_prompts.has_prompts
                then 'the accepted prompts went from none to some or back'
            {#- glm_item_cells absent: a load built before it kept the item cells -#}
            when coalesce(json_extract_string(previous.fact_vars, '$.glm_item_cells'), 'true')
                <> json_extract_string(load.fact_vars, '$.glm_item_cells')
                then 'the item cells are ' || case
                    when json_extract_string(load.fact_vars, '$.glm_item_cells') = 'true'
                        then 'kept now, not by the previous load'
                    else 'not kept now, kept by the previous load'
                end || ' (glm_item_cells: items fitted or glm_inputs all)'
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
    load.model_rows,
    load.scale_rows,
    reasons.full_reason is not null as needs_full,
    reasons.full_reason,
    cast([] as varchar[]) as facts_done,
    -- set by mark_load_built: the dbt command that last built a by-prompt model
    cast(null as varchar) as facts_built_by
from load
cross join previous
cross join accepted_prompts
cross join reasons
