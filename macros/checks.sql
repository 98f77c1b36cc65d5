{% macro reference_ctes(with_scales=true) -%}
    {#- The reference tables every *_checked input model resolves against, as
        CTEs: scales and labels (accepted rating_scales), aliases (model names),
        prompts (accepted prompt ids) and prompt_file (has_prompts: whether a
        prompts file was given, so that unknown prompts can be rejected). -#}
{%- if with_scales %}
scales as (
    select * from {{ ref('int_dimension_scales') }}
),

labels as (
    select * from {{ ref('int_rating_scales_checked') }}
    where reject_code is null
),
{% endif %}
aliases as (
    select * from {{ ref('int_model_aliases') }}
),

prompts as (
    select prompt_id from {{ ref('int_prompts_checked') }}
    where reject_code is null
),

prompt_file as (
    select count(*) > 0 as has_prompts from prompts
),
{%- endmacro %}

{% macro checked_inputs() -%}
    {#- Input kind -> (loader model, checked model): the inputs the warehouse
        models today, for rejected_rows and input_row_counts. -#}
    {{ return({
        'prompts': ('base_inputs__prompts', 'int_prompts_checked'),
        'completions': ('base_inputs__completions', 'int_completions_checked'),
        'human_annotations': ('base_inputs__human_annotations', 'int_human_annotations_checked'),
        'judge_ratings': ('base_inputs__judge_ratings', 'int_judge_ratings_checked'),
        'pairwise_judgments': ('base_inputs__pairwise_judgments', 'int_pairwise_checked'),
        'perturbation_judgments': (
            'base_inputs__perturbation_judgments', 'int_perturbation_checked'
        ),
        'models': ('base_inputs__models', 'int_models_checked'),
        'rating_scales': ('base_inputs__rating_scales', 'int_rating_scales_checked'),
    }) }}
{%- endmacro %}

{% macro name_lookup(relation, alias_column, model_column, family_column) -%}
    {#- Each distinct alias of relation.alias_column resolved once through the
        `aliases` CTE of reference_ctes() (matching keys are regular expressions:
        cheaper per distinct value than per row). -#}
    select
        names.{{ alias_column }},
        aliases.model as {{ model_column }},
        aliases.family as {{ family_column }}
    from (select distinct {{ alias_column }} from {{ relation }}) as names
    left join aliases
        on {{ text_key('names.' ~ alias_column) }} = aliases.alias_key
{%- endmacro %}

{% macro answer_lookup(relation, answer_column) -%}
    {#- Each distinct (dimension_input, answer) of relation resolved once to its
        dimension, scale and score (scored_label_columns), through the `scales`
        and `labels` CTEs of reference_ctes(). -#}
    select
        given.dimension_input,
        given.{{ answer_column }},
        scales.dimension,
        scales.scale_min,
        scales.scale_max,
        scales.scale_labels,
        {{ scored_label_columns('given.' ~ answer_column) }}
    from (select distinct dimension_input, {{ answer_column }} from {{ relation }}) as given
    left join scales
        on {{ text_key('given.dimension_input') }} = scales.dimension_key
    left join labels
        on
            scales.dimension_key = labels.dimension_key
            and {{ label_key('given.' ~ answer_column) }} = labels.label_key
{%- endmacro %}
