{% macro scored_label_columns(answer) -%}
    {#- Score columns for an answer joined to the matching scale label (alias
        `labels`, from int_rating_scales_checked): a scale label wins, then an NA
        label, then a number (checked against the scale later). -#}
    coalesce(labels.is_na, false) or (
        labels.label_key is null and {{ is_na_label(label_key(answer)) }}
    ) as is_na,
    case
        when labels.label_key is not null then 'label'
        when try_cast({{ answer }} as double) is not null then 'number'
    end as score_source,
    coalesce(labels.score, try_cast({{ answer }} as double)) as score_as_given
{%- endmacro %}

{% macro scored_checks(answer, model_checks) -%}
    {#- The checks every scored input runs after staging and the joins, in order.
        model_checks: (input column name, resolved-alias column, input-value column).
        Expects the columns dimension_input, dimension, scale_labels, scale_min,
        scale_max, has_prompts, known_prompt_id, prompt_id, is_na, score_as_given. -#}
    {%- set checks = [(
        'dimension is null', 'unknown_dimension',
        "'dimension ''' || dimension_input || ''' ' || case when "
        ~ text_key('dimension_input') ~ " = 'all' then 'is reserved (the marts label the"
        ~ " rows pooling every dimension ''all''): rename it here and in rating_scales'"
        ~ " else 'has no rating scale in rating_scales' end"
    )] -%}
    {%- for name, resolved, given in model_checks -%}
        {%- do checks.append(unknown_model_check(name, resolved, given)) -%}
    {%- endfor -%}
    {%- do checks.append(unknown_prompt_check()) -%}
    {%- do checks.append((
        'not is_na and score_as_given is null', 'unknown_label',
        "'label ''' || " ~ answer ~ " || ''' is neither a label of dimension ''' || dimension"
        ~ " || ''' (' || scale_labels || ') nor a number'"
    )) -%}
    {%- do checks.append((
        'not is_na and (not ' ~ is_finite('score_as_given')
        ~ ' or score_as_given not between scale_min and scale_max)',
        'score_out_of_range',
        "'score ' || score_as_given || ' is outside the scale [' || scale_min || ', '"
        ~ " || scale_max || '] of dimension ''' || dimension || ''''"
    )) -%}
    {{ return(checks) }}
{%- endmacro %}

{% macro normalised(score, scale_min, scale_max) -%}
    {{ ieee_divide(score ~ ' - ' ~ scale_min, scale_max ~ ' - ' ~ scale_min) }}
{%- endmacro %}

{% macro unknown_model_check(name, resolved, given) -%}
    {#- The check that a model name resolved through int_model_aliases.
        name: the input column's name; resolved: the resolved column; given: the input. -#}
    {{ return((
        resolved ~ ' is null', 'unknown_model',
        "'" ~ name ~ " ''' || " ~ given ~ " || ''' ' || case when " ~ text_key(given)
        ~ " = 'all' then 'is reserved (the marts label the rows pooling every model ''all''):"
        ~ " rename it here and in the models " ~ input_noun() ~ "' else 'is not in the models " ~ input_noun() ~ " or the"
        ~ " model_aliases seed' end"
    )) }}
{%- endmacro %}

{% macro unknown_prompt_check() -%}
    {#- The check that prompt_id is in the prompts file, when one is given.
        Expects has_prompts and known_prompt_id (null when not found). -#}
    {{ return((
        'has_prompts and known_prompt_id is null', 'unknown_prompt',
        "'prompt_id ''' || prompt_id || ''' is not in the prompts " ~ input_noun() ~ "'"
    )) }}
{%- endmacro %}
