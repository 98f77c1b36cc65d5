-- Every input row that did not make it into the warehouse, with the reason and
-- its input values (rebuilt from the loader's table, for rejected rows only).
{% set checked = checked_inputs() %}
with

{% for source, (base, model) in checked.items() %}
    {{ source }} as (
        select
            '{{ source }}' as source,
            checked.source_file,
            checked.row_number,
            checked.reject_code as reason_code,
            checked.reject_reason as reason,
            case
                -- a CSV record that did not parse: its line; a relation's row without
                -- its watermark (docs/incremental.md) has values, and no line
                when base._parse_error is not null and base._raw_line is not null
                    then {{ json_text_value('base._raw_line') }}
                else {{ raw_values_json(input_table(source), 'base') }}
            end as raw_values
        from {{ ref(model) }} as checked
        inner join {{ input_table(source) }} as base
            on checked.row_number = base._row_number
        where checked.reject_code is not null
    ),
{% endfor %}

final as (
    {% for source in checked %}
        select * from {{ source }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
)

select * from final
