-- The units of stratified PPI (python/judge_bias/ppi/estimator.py): one row per judge
-- (and the panel of all judges) x completion x dimension, with its human score y,
-- its judge score yhat, its label status and its stratum (the ppi_strata var).
-- A unit is a completion x dimension as one judge rated it (its runs averaged;
-- positive framing only, as the other judge-human marts), or, for the panel, the
-- mean of the judges that rated it. Units whose human labels are all NA or whose
-- judge scores are all NA are kept with status human_na / judge_na: counted
-- downstream, never dropped silently.
{%- set allowed = ['dimension', 'same_family', 'is_self', 'dataset', 'task_type'] %}
{%- set strata = var('ppi_strata') %}
{%- if strata is string %}{% set strata = strata.split(',') | map('trim') | list %}{% endif %}
{%- for s in strata %}
    {%- if s not in allowed %}
        {{ exceptions.raise_compiler_error(
            "ppi_strata: unknown stratum variable '" ~ s ~ "'; use any of " ~ allowed | join(', ')
        ) }}
    {%- endif %}
{%- endfor %}
{%- set parts = [] %}
{%- for s in strata %}
    {%- do parts.append("'" ~ s ~ "=' || coalesce(cast(all_units." ~ s ~ " as " ~ string_type() ~ "), '(none)')") %}
{%- endfor %}
{%- set stratum_expr = "concat_ws(', ', " ~ parts | join(', ') ~ ")" if parts else "'all'" %}
{#- the unit columns the strata read (dimension is a key), each aggregated from its
    ratings (flag_exprs) and over the judges for the panel (panel_exprs): the others
    are not computed (any_value over every rating costs at 10M ratings) -#}
{%- set unit_flags = [] %}
{%- if 'same_family' in strata %}{% do unit_flags.append('model_family') %}{% endif %}
{%- for s in allowed if s in strata and s != 'dimension' %}{% do unit_flags.append(s) %}{% endfor %}
{%- set flag_exprs = {
    'model_family': 'any_value(model_family)',
    'same_family': 'coalesce(bool_or(judge_family = model_family), false)',
    'is_self': 'bool_or(is_self)',
    'dataset': 'any_value(dataset)',
    'task_type': 'any_value(task_type)',
} %}
{#- the panel's flags belong to the model, not the unit: does the panel hold a judge
    of the model's family (the model itself)? A per-unit flag would make strata of
    the few units where those judges happened to answer NA. -#}
{%- set panel_exprs = {
    'model_family': 'any_value(model_family)',
    'same_family': 'any_value(model_family) in (select distinct ratings.judge_family from ratings)',
    'is_self': 'model in (select distinct ratings.judge from ratings)',
    'dataset': 'any_value(dataset)',
    'task_type': 'any_value(task_type)',
} %}
{#- a unit's flags from its one rating (the fast route below) -#}
{%- set rating_exprs = {
    'model_family': 'model_family',
    'same_family': 'coalesce(judge_family = model_family, false)',
    'is_self': 'is_self',
    'dataset': 'dataset',
    'task_type': 'task_type',
} %}
with

-- read up to five times (the runs, both routes' units and the panel's flags: its
-- judges, their families) and not materialised: DuckDB would buffer every column
-- of every rating first where each reader scans the few it needs
ratings as {{ not_materialized() }} (
    select * from {{ ref('fct_judge_ratings') }}
    where framing = 'positive'
),

-- the completions x dimensions whose human labels are all NA: the only ones a unit
-- without a human score looks up (status human_na); the few rows of a small hash
-- table, where joining all of int_human_scores_aggregated (unique on these keys)
-- probed a table of every completion for every unit
human_na as (
    select
        prompt_id,
        model,
        dimension
    from {{ ref('int_human_scores_aggregated') }}
    where n_na_labels > 0
),

-- fct_judge_ratings is unique on judge x prompt x model x dimension x framing x
-- run (int_judge_ratings_checked rejects a repeated key): with one run among the
-- positive ratings, each unit is one rating and the units are the ratings
-- themselves, the panel's the only aggregation (10M ratings: the ~10M groups of
-- the judges' units and their buffered copy were two thirds of the model). With
-- several runs, the runs are averaged as before. Each route reads every rating
-- but only one's rows pass the filter. A null run_id is a run (as run_means counts
-- them: outside fct_judge_ratings' contract, staging coalesces it).
run_count as (
    select {{ count_runs('run_id') }} as n_runs from ratings
),

one_run_judge_units as {{ not_materialized() }} (
    select
        judge,
        model,
        prompt_id,
        dimension,
        false as is_panel,
        judge_score_norm as yhat,
        {%- for s in unit_flags %}
            {{ rating_exprs[s] }} as {{ s }},
        {%- endfor %}
        human_score_norm as y
    from ratings
    where (select run_count.n_runs from run_count) <= 1
),

-- the panel's unit: the mean of its judges' scores (one each), the same as the
-- mean of the judges' units below
one_run_panel_units as (
    select
        'panel' as judge,
        panel_ratings.model,
        panel_ratings.prompt_id,
        panel_ratings.dimension,
        true as is_panel,
        avg(panel_ratings.judge_score_norm) as yhat,
        {%- for s in unit_flags %}
            {{ panel_exprs[s] }} as {{ s }},
        {%- endfor %}
        any_value(panel_ratings.human_score_norm) as y
    -- aliased: the panel's flags read ratings in a subquery
    from ratings as panel_ratings
    where (select run_count.n_runs from run_count) <= 1
    group by panel_ratings.model, panel_ratings.prompt_id, panel_ratings.dimension
),

runs_judge_units as (
    select
        judge,
        model,
        prompt_id,
        dimension,
        false as is_panel,
        avg(judge_score_norm) as yhat,
        {%- for s in unit_flags %}
            {{ flag_exprs[s] }} as {{ s }},
        {%- endfor %}
        any_value(human_score_norm) as y
    from ratings
    where (select run_count.n_runs from run_count) > 1
    group by judge, model, prompt_id, dimension
),

runs_panel_units as (
    select
        'panel' as judge,
        model,
        prompt_id,
        dimension,
        true as is_panel,
        avg(yhat) as yhat,
        {%- for s in unit_flags %}
            {{ panel_exprs[s] }} as {{ s }},
        {%- endfor %}
        any_value(y) as y
    from runs_judge_units
    group by model, prompt_id, dimension
),

all_units as (
    select * from one_run_judge_units
    union all
    select * from one_run_panel_units
    union all
    select * from runs_judge_units
    union all
    select * from runs_panel_units
),

units as (
    select
        all_units.judge,
        all_units.is_panel,
        all_units.model,
        all_units.prompt_id,
        all_units.dimension,
        all_units.yhat,
        all_units.y,
        case
            when all_units.yhat is null then 'judge_na'
            when all_units.y is not null then 'labelled'
            when human_na.prompt_id is not null then 'human_na'
            else 'unlabelled'
        end as status,
        {{ stratum_expr }} as stratum
    from all_units
    left join human_na
        on
            all_units.prompt_id = human_na.prompt_id
            and all_units.model = human_na.model
            and all_units.dimension = human_na.dimension
),

final as (
    select * from units
)

select * from final
