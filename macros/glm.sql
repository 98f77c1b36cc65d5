{% macro glm_posterior_columns() -%}
    {#- The posterior summary columns shared by glm_effects and
        glm_pairwise_effects (mean, sd, HDI at ci_level, MCSE, ESS, R-hat,
        P(> 0), the fit's status, the notes saying why an R-hat is null), in
        mart order. -#}
    mean,
    sd,
    hdi_low,
    hdi_high,
    ci_level,
    mcse,
    ess_bulk,
    ess_tail,
    r_hat,
    prob_positive,
    fit_status,
    notes
{%- endmacro %}

{% macro glm_input_needed(models) -%}
    {#- Whether this build fits one of `models` (GLM names), so that a GLM input
        table only some fits read (int_glm_item_counts: items; the agreement rows:
        the ordinal models) is built with its rows; else it is built empty, with
        its columns, and its checks run on no rows (issue 34: 11.7M rows each at
        10M ratings). The models asked for are resolved as
        judge_bias.glm.runner.GlmConfig.from_vars does: the glm_models var, else
        the environment variable JUDGE_BIAS_GLM_MODELS, else default (its
        DEFAULT_MODELS, the same list: tests/test_glm_defaults.py); names
        comma-separated, or default, all or none (unknown names fail in the
        runner). Always true with the var glm_inputs: all (every input table
        with its rows, whatever is fitted: to read them, or to compare a build
        with an incremental warehouse's) and on a plain (not incremental) build of
        a warehouse that holds loads (its item cells stay whole for the next
        load). On the incremental path the item cells are kept by prompt only
        while items is fitted: the answer is in int_load_scope's fact_vars, so a
        load that answers otherwise than the previous load recomputes every
        prompt (session 23: kept for int_glm_rating_counts whatever was fitted,
        they cost an append of 1% of 10M ratings 30 s of node time in session 22,
        on a contended machine, and 5.9 s of node wall time in session 23, whose
        change saved 6.0 CPU s of SQL models; the full build nothing). -#}
    {%- if not execute -%}
        {#- dbt's parse (refs and configs are the same either way): the
            environment is read when the model compiles to run, so a parse does
            not depend on it (tests/test_dbt_parse.py) -#}
        {%- set needed = true -%}
    {%- else -%}
        {%- set asked = var('glm_models', '') -%}
        {#- unset: none, blank or 'None' (judge_bias.settings.is_unset, padded) -#}
        {%- if asked is none or (asked is string and asked | trim in ['', 'None']) -%}
            {%- set asked = env_var('JUDGE_BIAS_GLM_MODELS', '') | trim or 'default' -%}
        {%- endif -%}
        {%- if asked is string -%}
            {%- set named = {'all': ['*'], 'none': [], 'default': ['grader_model', 'pairwise']} -%}
            {%- set names = named.get(asked | trim, []) if asked | trim in named
                else asked.split(',') | map('trim') | list -%}
        {%- else -%}
            {%- set names = asked | list -%}
        {%- endif -%}
        {%- set every_input = var('glm_inputs', '') | string | trim | lower == 'all' -%}
        {#- a warehouse that holds loads (int_load_scope) keeps the item cells for
            its next load even when this command is not incremental (a plain dbt
            run without the var would otherwise empty them: review15c) -#}
        {%- set holds_loads = adapter.get_relation(
            database=this.database, schema=this.schema, identifier='int_load_scope'
        ) is not none -%}
        {%- set needed = every_input or (holds_loads and not incremental_on()) or '*' in names
            or (names | select('in', models) | list | length > 0) -%}
    {%- endif -%}
    {{ return(needed) }}
{%- endmacro %}
