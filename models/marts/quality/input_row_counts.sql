-- Per input file (or relation): rows read, accepted and rejected; read = accepted +
-- rejected. On the relation route rows_read is a count(*) of the relation itself.
-- The rejected share and the gates' thresholds (dbt vars) sit beside the counts,
-- so the validation suite checks each file against them. The gates judge the
-- gate_* columns: the whole file on a full build; on an incremental build
-- (docs/incremental.md) this build's load: the base table's rows loaded by this
-- dbt command (numbered after every earlier load's rows), less the rows whose
-- watermark is null that an earlier load rejected with the same key and values
-- and this one read again (read_again: reported in rejected_rows, no new input).
{% set checked = checked_inputs() %}
{%- if input_relation_kinds() %}
    -- the relations' counts, read by input_rows_read, and on an incremental build
    -- tested against each load's rows: built with the gates
    -- depends_on: {{ ref('stg_inputs__relation_counts') }}
{%- endif %}
{% set incremental = var('judge_bias_incremental', false) | string | lower in ['true', '1', 'yes', 'on'] %}
with

{% for source, (base, model) in checked.items() %}
    {{ source }} as (
        select
            '{{ source }}' as source,
            (select any_value(base._source_file) from {{ input_table(source) }} as base) as source_file,
            {{ input_rows_read(source) }} as rows_read,
            count(*) filter (where reject_code is null) as rows_accepted,
            count(*) filter (where reject_code is not null) as rows_rejected,
            {% if incremental %}
                (
                    select count(*) from {{ input_table(source) }} as base
                    where {{ in_this_load('base') }} and not {{ read_again('base') }}
                ) as gate_rows_read,
                count(*) filter (
                    where reject_code is null and row_number >= (
                        select min(base._row_number) from {{ input_table(source) }} as base
                        where {{ in_this_load('base') }}
                    )
                ) as gate_rows_accepted,
                coalesce(
                    (
                        select 'load ' || max(base._load_id) from {{ input_table(source) }} as base
                        where {{ in_this_load('base') }}
                    ),
                    'none in this load (no new rows)'
                ) as gate_scope
            {% else %}
                {{ input_rows_read(source) }} as gate_rows_read,
                count(*) filter (where reject_code is null) as gate_rows_accepted,
                'build' as gate_scope
            {% endif %}
        from {{ ref(model) }}
    ),
{% endfor %}

counted as (
    {% for source in checked %}
        select * from {{ source }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
),

final as (
    select
        source,
        rows_read,
        rows_accepted,
        rows_rejected,
        rows_accepted + rows_rejected as rows_accounted,
        case
            when rows_read > 0 then cast(rows_rejected as double) / rows_read
        end as rejected_share,
        {{ share_var('warn_rejected_share') }} as warn_rejected_share,
        {{ share_var('max_rejected_share') }} as max_rejected_share,
        source_file,
        gate_scope,
        gate_rows_read,
        gate_rows_accepted,
        gate_rows_read - gate_rows_accepted as gate_rows_rejected,
        case
            when gate_rows_read > 0 then cast(gate_rows_read - gate_rows_accepted as double) / gate_rows_read
        end as gate_rejected_share
    from counted
)

select * from final
