-- Every input row that did not make it into the warehouse, with the reason.
{% set checked = checked_inputs() %}
with

{% for source, (base, model) in checked.items() %}
    {{ source }} as (
        select
            '{{ source }}' as source,
            source_file,
            row_number,
            reject_code as reason_code,
            reject_reason as reason,
            raw_values
        from {{ ref(model) }}
        where reject_code is not null
    ),
{% endfor %}

final as (
    {% for source in checked %}
        select * from {{ source }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
)

select * from final
