-- Per input file: rows read, accepted and rejected; read = accepted + rejected.
{% set checked = {
    'prompts': ('base_inputs__prompts', 'int_prompts_checked'),
    'completions': ('base_inputs__completions', 'int_completions_checked'),
    'human_annotations': ('base_inputs__human_annotations', 'int_human_annotations_checked'),
    'judge_ratings': ('base_inputs__judge_ratings', 'int_judge_ratings_checked'),
    'models': ('base_inputs__models', 'int_models_checked'),
    'rating_scales': ('base_inputs__rating_scales', 'int_rating_scales_checked'),
} %}
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
