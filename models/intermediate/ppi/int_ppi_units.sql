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
with

-- read three times (judge_units, panel_families, panel_judges) and not
-- materialised: DuckDB would buffer every column of every rating first (a fifth
-- of the model's CPU at 1M ratings) where each reader scans the few it needs
ratings as {{ not_materialized() }} (
    select * from {{ ref('fct_judge_ratings') }}
    where framing = 'positive'
),

human as (
    select * from {{ ref('int_human_scores_aggregated') }}
),

judge_units as (
    select
        judge,
        model,
        prompt_id,
        dimension,
        false as is_panel,
        any_value(dataset) as dataset,
        any_value(task_type) as task_type,
        avg(judge_score_norm) as yhat,
        any_value(human_score_norm) as y,
        any_value(model_family) as model_family,
        coalesce(bool_or(judge_family = model_family), false) as same_family,
        bool_or(is_self) as is_self
    from ratings
    group by judge, model, prompt_id, dimension
),

panel_families as (
    select distinct judge_family from ratings
),

panel_judges as (
    select distinct judge from ratings
),

panel_units as (
    select
        'panel' as judge,
        model,
        prompt_id,
        dimension,
        true as is_panel,
        any_value(dataset) as dataset,
        any_value(task_type) as task_type,
        avg(yhat) as yhat,
        any_value(y) as y,
        any_value(model_family) as model_family,
        -- the panel's flags belong to the model, not the unit: does the panel hold a
        -- judge of the model's family (the model itself)? A per-unit flag would make
        -- strata of the few units where those judges happened to answer NA.
        any_value(model_family) in (
            select panel_families.judge_family from panel_families
        ) as same_family,
        model in (select panel_judges.judge from panel_judges) as is_self
    from judge_units
    group by model, prompt_id, dimension
),

all_units as (
    select * from judge_units
    union all
    select * from panel_units
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
            when coalesce(human.n_na_labels, 0) > 0 then 'human_na'
            else 'unlabelled'
        end as status,
        {{ stratum_expr }} as stratum
    from all_units
    left join human
        on
            all_units.prompt_id = human.prompt_id
            and all_units.model = human.model
            and all_units.dimension = human.dimension
),

final as (
    select * from units
)

select * from final
