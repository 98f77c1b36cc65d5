{#- Incremental facts by prompt (docs/incremental.md, "The facts: by prompt"). With
    the var judge_bias_incremental, the models that call
    config(incremental_by_prompt()) keep their rows across builds and recompute
    only the prompts the build's load touched (int_load_prompts), or every prompt
    when the load can change rows beyond its prompts (int_load_scope.needs_full).
    Without the var they are what they were: nothing here renders. -#}

{% macro incremental_on() -%}
    {{ return(var('judge_bias_incremental', false) | string | lower in ['true', '1', 'yes', 'on']) }}
{%- endmacro %}

{% macro incremental_by_prompt(run_column=none, prompt_column='prompt_id', glm_model=none) -%}
    {#- The config of a model incremental by prompt: append after deleting the
        touched prompts' rows (delete_load_prompts, a pre-hook: dbt's delete+insert
        would keep the rows whose prompt_id is null). prompt_column: the model's
        column holding the prompt (the GLM tables call it item). glm_model: the GLM
        whose fit alone keeps the rows (glm_input_needed; items for the item
        cells): while it is not fitted the pre-hook deletes every row. {} without
        the var. -#}
    {%- if incremental_on() -%}
        {{ return({
            'materialized': 'incremental',
            'incremental_strategy': 'append',
            'on_schema_change': 'fail',
            'pre_hook': ["{{ delete_load_prompts(" ~ (("'" ~ run_column ~ "'") if run_column else "none")
                ~ ", '" ~ prompt_column ~ "', " ~ (("'" ~ glm_model ~ "'") if glm_model else "none") ~ ") }}"],
        }) }}
    {%- else -%}
        {{ return({}) }}
    {%- endif -%}
{%- endmacro %}

{% macro load_prompt_dependencies() -%}
    {#- The load's scope tables, as dbt dependencies (a ref inside is_incremental()
        is not seen at parse time). Nothing without the var. -#}
    {%- if incremental_on() -%}
        {{ return('-- depends_on: ' ~ ref('int_load_scope') ~ ', ' ~ ref('int_load_prompts') ~ '\n') }}
    {%- endif -%}
{%- endmacro %}

{% macro load_prompt_condition(column='prompt_id', run_column=none, scope=none, touched=none) -%}
    {#- True for a row the build recomputes: every row when the load needs a full
        recompute, else the rows without a prompt and those of a touched prompt
        (int_load_prompts); with run_column, of a prompt touched as a whole (run_id
        null: by its prompts, completions or human labels) or of a touched prompt
        and run (by the load's ratings). scope, touched: the relations of
        int_load_scope and int_load_prompts where ref() cannot be called (a test). -#}
    {%- set touched = touched or ref('int_load_prompts') -%}
    (
    {%- set scope = scope or ref('int_load_scope') %}
        (select needs_full from {{ scope }} where load_id = {{ current_load_id(scope) }})
        or {{ column }} is null
    {%- if run_column is none %}
        or {{ column }} in (select prompt_id from {{ touched }})
    {%- else %}
        or {{ column }} in (select prompt_id from {{ touched }} where run_id is null)
        or {{ column }} || chr(31) || {{ run_column }} in (
            select prompt_id || chr(31) || run_id from {{ touched }} where run_id is not null
        )
    {%- endif %}
    )
{%- endmacro %}

{% macro load_prompt_filter(column='prompt_id', run_column=none) -%}
    {#- `where <condition>` on an incremental run; nothing otherwise. -#}
    {%- if is_incremental() %} where {{ load_prompt_condition(column, run_column) }}{% endif -%}
{%- endmacro %}

{% macro delete_load_prompts(run_column=none, prompt_column='prompt_id', glm_model=none) -%}
    {#- The pre-hook: the rows the build recomputes leave the table first; every
        row while glm_model is not fitted (glm_input_needed): the model inserts
        none then, and rows a plain dbt run wrote between loads (glm_input_needed
        is true there) would stay, stale for the prompts later loads touch
        (review of session 23: 319 of 19,243 item cells). The table is empty then
        but for that case: the delete costs nothing. -#}
    {%- if is_incremental() -%}
        {%- if glm_model and not glm_input_needed([glm_model]) -%}
        delete from {{ this }}
        {%- else -%}
        delete from {{ this }} where {{ load_prompt_condition(prompt_column, run_column) }}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{% macro by_prompt_models() -%}
    {#- The models incremental by prompt: a load is complete when each has been
        built for it (int_load_scope.facts_done); one that is not (a killed or
        failed build, a partial selection) makes the next load recompute every
        prompt, as the prompts it touched may be stale in some of them. -#}
    {{ return(by_prompt_run_columns().keys() | list) }}
{%- endmacro %}

{% macro mark_load_built(results) -%}
    {#- The on-run-end hook: the models incremental by prompt that this dbt command
        built without error are built for the build's load (added to
        int_load_scope.facts_done). One update at the end of the command, not one
        per model: two models' post-hooks updating the row from dbt's two threads
        failed on DuckDB's write conflict. A killed command runs no hook (its
        models are not marked). Nothing without the var or when none was built. -#}
    {%- if not execute or not incremental_on() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set built = [] -%}
    {%- for result in results -%}
        {%- if result.node.resource_type == 'model' and result.node.name in by_prompt_models()
            and result.status == 'success' -%}
            {%- do built.append(result.node.name) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if built -%}
        {%- set scope = graph_relation('int_load_scope') %}
        update {{ scope }}
        set facts_done = list_distinct(list_concat(facts_done, [
            {%- for name in built | sort %}'{{ name }}'{% if not loop.last %}, {% endif %}{% endfor -%}
        ])),
        facts_built_by = '{{ invocation_id }}'
        where load_id = {{ current_load_id(scope) }}
    {%- endif -%}
{%- endmacro %}

{% macro current_load_id(scope=none) -%}
    {#- The build's load: the var judge_bias_load_id when given (plain dbt may name
        the load), else the load read last (_loaded_at: a load id given by name need
        not sort in load order). judge-bias build gives no var: its loaders name the
        load when they run (judge_bias.inputs.loads.process_load_id), so the vars,
        and dbt's parse, are the same for every load (a var changed every load made
        dbt parse the whole project again). scope: the relation of int_load_scope,
        once it is built for the load (its last load_number is the build's load: a
        lookup in a table of one row per load instead of a scan of the inputs). -#}
    {%- set given = var('judge_bias_load_id', '') -%}
    {%- if given | string | length > 0 -%}
        {{ sql_string(given | string | replace("'", "")) }}
    {%- elif scope is not none -%}
        (select arg_max(load_id, load_number) from {{ scope }})
    {%- else -%}
        (
            select arg_max(_load_id, _loaded_at) from (
                {%- for kind in load_kinds() %}
                select arg_max(_load_id, _loaded_at) as _load_id, max(_loaded_at) as _loaded_at
                from {{ input_table(kind) }}
                {%- if not loop.last %} union all{% endif %}
                {%- endfor %}
            )
        )
    {%- endif -%}
{%- endmacro %}

{% macro load_kinds() -%}
    {{ return([
        'prompts', 'completions', 'human_annotations', 'judge_ratings',
        'pairwise_judgments', 'perturbation_judgments', 'models', 'rating_scales',
    ]) }}
{%- endmacro %}

{% macro prompt_kinds() -%}
    {#- The kinds whose every row belongs to one prompt (their key holds prompt_id). -#}
    {{ return(['prompts', 'completions', 'human_annotations', 'judge_ratings']) }}
{%- endmacro %}

{% macro fact_vars() -%}
    {#- The vars the checked inputs read (the range checks), and whether the item
        cells are kept (int_glm_item_counts has rows only while items is fitted:
        glm_input_needed): a load built with other values than the previous
        load's recomputes every prompt. -#}
    {{ return({'score_range': var('score_range'), 'max_count': var('max_count'),
               'glm_item_cells': glm_input_needed(['items'])}) }}
{%- endmacro %}

{% macro by_prompt_run_columns() -%}
    {#- The run column of each model incremental by prompt (none: recomputed by
        whole prompt), as its config(incremental_by_prompt(...)) names it. -#}
    {{ return({'int_judge_ratings_checked': 'run_id', 'fct_judge_ratings': 'run_id',
               'int_agreement_prompt_sums': none,
               'int_glm_item_counts': none,
               'int_agreement_binary_ratings': none,
               'int_self_vs_peer_items': none}) }}
{%- endmacro %}

{% macro by_prompt_column(model_name) -%}
    {#- The prompt column of a model incremental by prompt, as its
        config(incremental_by_prompt(...)) names it: prompt_id but for the GLM
        tables, whose prompt is the item. -#}
    {{ return({'int_glm_item_counts': 'item'}.get(model_name, 'prompt_id')) }}
{%- endmacro %}

{% macro get_where_subquery(relation) -%}
    {#- dbt's hook for a test's `where` config (dbt's default, then): on an
        incremental build, a row-level test of a model incremental by prompt
        (by_prompt_test_scope) reads only the rows the build recomputed; the
        other rows were tested by the loads that wrote them. -#}
    {%- set where = config.get('where', '') -%}
    {%- set scope = by_prompt_test_scope(relation) -%}
    {%- if scope -%}
        {%- set filtered -%}
            (select * from {{ relation }} where {% if where %}({{ where }}) and {% endif %}{{ scope }}) dbt_subquery
        {%- endset -%}
        {{ return(filtered) }}
    {%- endif -%}
    {{ return(dbt.default__get_where_subquery(relation)) }}
{%- endmacro %}

{% macro by_prompt_test_scope(relation) -%}
    {#- The condition restricting a dbt test of `relation` to the recomputed rows,
        or '' when it reads the whole table: by_prompt_rule_scope of the test's
        name and key (a model_checks test restricts each of its rules instead). -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set meta = model.get('test_metadata') or {} -%}
    {%- set key = (meta.get('kwargs') or {}).get('combination_of_columns') or [] -%}
    {{ return(by_prompt_rule_scope(relation, meta.get('name'), key)) }}
{%- endmacro %}

{% macro by_prompt_rule_scope(relation, name, key=[]) -%}
    {#- The condition restricting a check `name` (a dbt test or a model_checks
        rule; `key`: a uniqueness check's columns) of `relation` to the recomputed
        rows (load_prompt_condition), or '' when it reads the whole table: not an
        incremental build, not a model incremental by prompt, or a check that
        compares rows beyond one recomputed unit. Row-level checks (not_null,
        accepted_values, value_between, expression_is_true, relationships on the
        child) judge each row alone; a uniqueness check only when its key holds
        prompt_id (and the model's run column): rows that share such a key are
        recomputed together, so a re-sent duplicate is caught. `unique` on one
        column (row_number, source_row_number: numbered across loads) and any
        other check read the whole table. -#}
    {%- set runs = by_prompt_run_columns() -%}
    {%- if not incremental_on() or relation is string or relation.identifier not in runs -%}
        {{ return('') }}
    {%- endif -%}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set run_column = runs[relation.identifier] -%}
    {%- set prompt_column = by_prompt_column(relation.identifier) -%}
    {%- if name in ['not_null', 'accepted_values', 'value_between', 'expression_is_true', 'relationships'] -%}
        {{ return(load_prompt_condition(prompt_column, run_column, graph_relation('int_load_scope'), graph_relation('int_load_prompts'))) }}
    {%- elif name == 'unique_combination_of_columns' -%}
        {%- if prompt_column in key and (run_column is none or run_column in key) -%}
            {{ return(load_prompt_condition(prompt_column, run_column, graph_relation('int_load_scope'), graph_relation('int_load_prompts'))) }}
        {%- endif -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}

{% macro graph_relation(name) -%}
    {#- The relation of model `name` of this package, from the graph: a test's
        where-subquery may not ref() a model the test does not depend on. -#}
    {%- set node = graph.nodes['model.judge_bias.' ~ name] -%}
    {{ return(api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias)) }}
{%- endmacro %}
