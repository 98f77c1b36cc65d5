-- Per input file (or relation): rows read, accepted and rejected; read = accepted +
-- rejected. On the relation route rows_read is a count(*) of the relation itself.
-- The rejected share and the gates' thresholds (dbt vars) sit beside the counts,
-- so the validation suite checks each file against them.
{% set checked = checked_inputs() %}
with

{% for source, (base, model) in checked.items() %}
    {{ source }} as (
        select
            '{{ source }}' as source,
            (select any_value(base._source_file) from {{ input_table(source) }} as base) as source_file,
            {{ input_rows_read(source) }} as rows_read,
            count(*) filter (where reject_code is null) as rows_accepted,
            count(*) filter (where reject_code is not null) as rows_rejected
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
        source_file
    from counted
)

select * from final
