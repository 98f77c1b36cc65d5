-- Every input row that did not make it into the warehouse, with the reason.
{% set checked = {
    'prompts': 'int_prompts_checked',
    'completions': 'int_completions_checked',
    'human_annotations': 'int_human_annotations_checked',
    'judge_ratings': 'int_judge_ratings_checked',
    'models': 'int_models_checked',
    'rating_scales': 'int_rating_scales_checked',
} %}
with

{% for source, model in checked.items() %}
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
