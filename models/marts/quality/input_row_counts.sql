-- Per input file: rows read, accepted and rejected; read = accepted + rejected.
{% set checked = checked_inputs() %}
with

{% for source, (base, model) in checked.items() %}
    {{ source }} as (
        select
            '{{ source }}' as source,
            (select count(*) from {{ ref(base) }}) as rows_read,
            count(*) filter (where reject_code is null) as rows_accepted,
            count(*) filter (where reject_code is not null) as rows_rejected
        from {{ ref(model) }}
    ),
{% endfor %}

final as (
    select
        *,
        rows_accepted + rows_rejected as rows_accounted
    from (
        {% for source in checked %}
            select * from {{ source }}
            {% if not loop.last %}union all{% endif %}
        {% endfor %}
    )
)

select * from final
