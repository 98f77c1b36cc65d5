{% macro record_last_run() -%}
    {#- on-run-start hook: one row naming this dbt invocation, replaced by every
        command that rebuilds tables. judge-bias stores the invocation id in its
        validation record, so a record older than the warehouse's tables (a
        plain `dbt build` after the last validation) is detected as stale; with the
        data folder (empty on the relation route), the input kinds read from
        relations and the command line's dbt vars (JSON), which the validation
        record repeats. -#}
    {%- if execute and flags.WHICH in ('build', 'run', 'seed', 'snapshot') -%}
        {%- do check_package_vars() -%}
        {%- set loader = graph.nodes.get('model.judge_bias.base_inputs__judge_ratings', {}) -%}
        {%- set relations = input_relation_kinds() -%}
        {#- the relation route reads no data folder -#}
        {%- set data_dir = '' if relations else (loader.get('config', {}).get('data_dir') or env_var('JUDGE_BIAS_DATA_DIR', 'data/demo')) | string -%}
        {#- the command line's vars but data_dir (recorded above) -#}
        {%- set cli_vars = {} -%}
        {%- for name, value in (invocation_args_dict.get('vars') or {}).items() if name != 'data_dir' -%}
            {%- do cli_vars.update({name: value}) -%}
        {%- endfor -%}
        {{ create_or_replace_table_as(target.schema ~ '.dbt_last_run') }}
        select
            '{{ invocation_id }}' as invocation_id,
            '{{ flags.WHICH }}' as command,
            cast('{{ run_started_at.isoformat() }}' as {{ timestamp_tz_type() }}) as started_at,
            '{{ data_dir | replace("'", "''") }}' as data_dir,
            {{ sql_string(relations | join(',')) }} as input_relations,
            {{ sql_string(tojson(cli_vars, sort_keys=true)) }} as dbt_vars
            {%- if target.type == 'duckdb' %},
            cast(current_setting('threads') as integer) as duckdb_threads
            {%- endif %}
    {%- else -%}
        select 1
    {%- endif %}
{%- endmacro %}

{% macro create_or_replace_table_as(relation_name) -%}
    {{ return(adapter.dispatch('create_or_replace_table_as', 'judge_bias')(relation_name)) }}
{%- endmacro %}

{% macro default__create_or_replace_table_as(relation_name) -%}
    create or replace table {{ relation_name }} as
{%- endmacro %}

{% macro spark__create_or_replace_table_as(relation_name) -%}
    {#- Spark replaces only v2 (e.g. Delta) tables: drop, then create -#}
    {%- do run_query('drop table if exists ' ~ relation_name) -%}
    create table {{ relation_name }} as
{%- endmacro %}

{% macro timestamp_tz_type() -%}
    {{ return(adapter.dispatch('timestamp_tz_type', 'judge_bias')()) }}
{%- endmacro %}

{% macro default__timestamp_tz_type() -%}
    timestamptz
{%- endmacro %}

{% macro spark__timestamp_tz_type() -%}
    timestamp
{%- endmacro %}

{% macro duckdb_threads() -%}
    {#- on-run-start hook, before record_last_run: DuckDB's threads for this dbt
        command when the environment variable JUDGE_BIAS_DUCKDB_THREADS names them
        (a positive integer); nothing otherwise (DuckDB's default: every core).
        judge-bias build sets 1 for its second phase, where dbt's two threads keep
        both cores busy with two nodes at a time: a query on one thread spends
        ~14% fewer CPU seconds than on two (10M ratings, two threads then one:
        the build 191 -> 165 CPU s), while the first phase's narrow DAG keeps
        its queries on every core. -#}
    {#- read only when the hook runs: dbt's saved parse then records no environment
        variable (tests/test_glm_defaults.py), so another value re-parses nothing -#}
    {%- set threads = (env_var('JUDGE_BIAS_DUCKDB_THREADS', '') | trim) if execute else '' -%}
    {%- if threads and target.type == 'duckdb' -%}
        {%- if not (threads is string and threads.isdigit() and threads | int > 0) -%}
            {{ exceptions.raise_compiler_error("JUDGE_BIAS_DUCKDB_THREADS must be a positive integer, not '" ~ threads ~ "'") }}
        {%- endif -%}
        set threads = {{ threads | int }}
    {%- endif -%}
{%- endmacro %}

{% macro package_config_settings() -%}
    {#- The judge-bias settings that reach its models ONLY through the model configs
        its dbt_project.yml renders from the vars of the same names (`+ci_level:`),
        which in a team's project dbt renders without the team's and the command
        line's vars. Not here: dbt's own config keys (database, schema, tags, ...), and
        the settings also read with var() in macros or models (glm_models,
        min_term_support, judge_bias_incremental, ppi_pairs_engine), which the
        command line does reach. tests/test_dbt_package.py checks this list against
        dbt_project.yml and the var() calls of macros/ and models/. -#}
    {{ return([
        'budget_half_width', 'ci_level', 'comparison_power', 'csv_dialects', 'data_dir',
        'drift_max_flip_rate', 'drift_min_shift', 'drift_n_boot', 'gam_knots',
        'glm_agreement_draws', 'glm_chains', 'glm_draws', 'glm_priors', 'glm_seed',
        'glm_target_accept', 'glm_warmup', 'max_fits', 'max_ordinal_params',
        'memory_budget', 'pass_threshold', 'ppi_interval', 'ppi_lambda', 'se_type',
        'task_groups', 'weakest_k', 'weakest_models',
    ]) }}
{%- endmacro %}

{% macro package_setting_defaults() -%}
    {#- The default of each scalar setting of package_config_settings(), the value a
        config left at '' stands for: so that check_package_vars passes a var equal to
        it (ci_level: 0.9), which changes no result. A mirror, for the macros alone
        (Jinja cannot import Python): the defaults live in the topics' settings.py, and
        tests/test_dbt_package.py fails when one here differs from them. A setting
        missing here (the lists, whose default an empty one stands for, and data_dir,
        whose default is the environment or the embedded demo: check_package_vars) is
        compared with its config only. -#}
    {{ return({
        'budget_half_width': 0.05, 'ci_level': 0.9, 'comparison_power': 0.8,
        'drift_max_flip_rate': 0.2, 'drift_min_shift': 0.05, 'drift_n_boot': 500,
        'gam_knots': 5, 'glm_agreement_draws': 100, 'glm_chains': 2, 'glm_draws': 1000,
        'glm_seed': 20250101, 'glm_target_accept': 0.8, 'glm_warmup': 200,
        'max_fits': 200, 'max_ordinal_params': 200, 'memory_budget': '2GB',
        'pass_threshold': 0.5, 'ppi_interval': 'skew', 'ppi_lambda': 'tuned',
        'se_type': 'HC0', 'weakest_k': 2,
    }) }}
{%- endmacro %}

{% macro package_setting_changes(value, config, default, read_as='') -%}
    {#- Whether a var ``value`` would change a result against a model's ``config``
        (its text, '' when left to the default) and the setting's ``default`` (none
        when package_setting_defaults() has none): false for an unset var (none, ''
        or 'None', untrimmed: judge_bias.settings.is_unset's rule; for data_dir none
        or '' alone, data_dir_of's rule, 'None' a folder; an empty list or mapping,
        which the list settings read as their default: glm_priors {}, task_groups [],
        weakest_models []) and for one equal to the effective value (the config, or
        the default under '') as the setting's parser reads both: numbers as numbers
        (0.9, 0.90, '0.9') when ``read_as`` is '', a size (``read_as`` 'size':
        memory_budget alone) as bytes (2GB, '2 GB', 2000MB: parse_size of
        judge_bias.limits), a list (``read_as`` 'list' alone: a list given to
        another setting is its text, refused) as its items (weakest_models: 'a, b'
        as [a, b]), a mapping as a mapping, a path (``read_as`` 'path': data_dir) as pathlib reads it ('data/x/' as
        'data/x'; not trimmed: 'data/x ' is another folder), else as trimmed text. -#}
    {#- data_dir as the loader reads it (data_dir_of): only none and '' are unset, 'None'
        is a folder of that name -#}
    {%- set unset = [''] if read_as == 'path' else ['', 'None'] -%}
    {%- set empty = value is not string and value is iterable and value | length == 0 -%}
    {#- not trimmed, as is_unset reads it: '  ' is a value (a folder of that name for
        data_dir, refused by a number's parser), not the default -#}
    {%- if value is none or empty or value | string in unset -%}
        {{ return(false) }}
    {%- endif -%}
    {%- if read_as == 'list' and value is not string and value is not iterable -%}
        {#- a number for a list of model names: its parser refuses it (bias settings) -#}
        {{ return(true) }}
    {%- endif -%}
    {%- set effective = default if (config is none or config | string in unset) else config -%}
    {%- if effective is none -%}
        {{ return(true) }}
    {%- endif -%}
    {%- if read_as == '' -%}
        {#- a number only where the setting reads one: a path or a list reads '01'
            as another name than '1' -#}
        {%- set a = value | string | trim | float(none) -%}
        {%- set b = effective | string | trim | float(none) -%}
        {%- if a is not none and b is not none -%}
            {{ return(a != b) }}
        {%- endif -%}
    {%- endif -%}
    {#- each side as the setting's parser reads it: a mapping as it is; a list setting's
        list as its items, a text as its items split at commas, trimmed,
        empty ones left out (weakest_models); a path as the parts between slashes but '' and '.', as pathlib.PurePath
        joins them; a size (memory_budget) in bytes when it is one (parse_size's
        pattern: a number, a unit ending in B or none); else the trimmed text -#}
    {%- set units = {'': 1, 'B': 1, 'KB': 10 ** 3, 'MB': 10 ** 6, 'GB': 10 ** 9, 'TB': 10 ** 12,
                     'KIB': 2 ** 10, 'MIB': 2 ** 20, 'GIB': 2 ** 30, 'TIB': 2 ** 40} -%}
    {%- set read = [] -%}
    {%- for side in [value, effective] -%}
        {#- a path is not trimmed: the loader reads Path(data_dir) as given -#}
        {%- set text = side | string if read_as == 'path' else side | string | trim -%}
        {%- set size = modules.re.fullmatch('(\\d+(?:\\.\\d+)?)\\s*((?:[KMGT]I?)?B)?', text, modules.re.IGNORECASE) -%}
        {%- if side is mapping -%}
            {%- do read.append(side) -%}
        {%- elif read_as == 'list' -%}
            {%- if side is string or side is not iterable -%}
                {%- do read.append(text.split(',') | map('trim') | reject('equalto', '') | list) -%}
            {%- else -%}
                {%- do read.append(side | map('string') | list) -%}
            {%- endif -%}
        {%- elif read_as == 'path' -%}
            {%- set parts = text.split('/') | reject('in', ['', '.']) | join('/') -%}
            {%- set root = '/' if text.startswith('/') else '' -%}
            {%- do read.append(root ~ (parts or ('' if root else '.'))) -%}
        {%- elif read_as == 'size' and size -%}
            {%- do read.append((size.group(1) | float * units[(size.group(2) or '') | upper]) | int) -%}
        {%- else -%}
            {%- do read.append(text) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(read[0] != read[1]) }}
{%- endmacro %}

{% macro check_package_vars() -%}
    {#- In a team's project (judge-bias a package), dbt renders judge-bias's
        dbt_project.yml without the team's vars and the command line's, so `dbt build
        --vars '{ci_level: 0.95}'`, or `vars: {ci_level: 0.95}` in the team's
        dbt_project.yml (global or scoped to judge_bias), would leave the configs built
        from them at their defaults (or at the team's configs) while dbt_last_run
        recorded the command line's. Refuse that run when it selects a judge-bias
        model: a var among package_config_settings(), as var() reads it here (the
        command line's, else the team's dbt_project.yml's: dbt merges both for a
        judge-bias hook), must not change the result of any selected judge-bias model
        that has the config (package_setting_changes: a var equal to the config, or
        to the default under a config left at '', passes, 0.9 as 0.90). Nothing in the
        standalone project, where the vars reach the configs. Not data_dir and
        csv_dialects on the relation route (judge_bias_input_relations set), where
        nothing reads them (the kinds not listed are absent, not read from files).
        var() also reads the team's global vars: the refusal names the fix for a var
        meant for the team's own models too (scoped to its project, var() here no
        longer sees it). -#}
    {%- if project_name != 'judge_bias' -%}
        {%- set file_settings = ['data_dir', 'csv_dialects'] if input_relation_kinds() else [] -%}
        {%- set settings = package_config_settings() | reject('in', file_settings) | list -%}
        {%- set defaults = package_setting_defaults() -%}
        {#- data_dir left at '': the folder of JUDGE_BIAS_DATA_DIR when set (what the
            loaders read, judge_bias.inputs.relations.data_dir_of), else the embedded
            demo, whose path this project does not know (a var is refused) -#}
        {%- do defaults.update({'data_dir': env_var('JUDGE_BIAS_DATA_DIR', '') or none}) -%}
        {%- set read_as = {'data_dir': 'path', 'memory_budget': 'size', 'weakest_models': 'list'} -%}
        {%- set missed = [] -%}
        {%- for name in settings -%}
            {%- set value = var(name, none) -%}
            {%- for node in graph.nodes.values()
                if value is not none
                and node.unique_id in selected_resources
                and node.package_name == 'judge_bias' and node.resource_type == 'model'
                and name in node.config
                and package_setting_changes(value, node.config[name], defaults.get(name), read_as.get(name, '')) -%}
                {%- if loop.first -%}
                    {%- do missed.append(name ~ ': ' ~ value ~ ' (' ~ node.name ~ ' has ' ~ (node.config[name] | string or "''") ~ ')') -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endfor -%}
        {%- if missed -%}
            {{ exceptions.raise_compiler_error(
                "judge-bias: the vars " ~ missed | join(', ')
                ~ " do not reach judge-bias's models in your project (dbt renders a package's"
                ~ " dbt_project.yml without the command line's vars and your project's):"
                ~ " for judge-bias, set them as configs in your dbt_project.yml,"
                ~ " e.g. models: {judge_bias: {+ci_level: 0.95}}, or data_dir with the"
                ~ " environment variable JUDGE_BIAS_DATA_DIR; min_term_support and glm_models,"
                ~ " read both ways, need the config and the var; a var meant for your own"
                ~ " models, scope it to your project: vars: {" ~ project_name ~ ": {"
                ~ missed[0].split(':')[0] ~ ": ...}} (docs/dbt-package.md)"
            ) }}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
