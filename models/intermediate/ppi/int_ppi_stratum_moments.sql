-- The sufficient statistics of stratified PPI (python/judge_bias/stats/ppi.py):
-- per judge (and the panel of all judges) x model x dimension (each also
-- pooled as 'all') x stratum, nine moments of the labelled units (a human
-- score and the judge's) and the unlabelled ones (the judge's score only), and
-- five third central moments for the skewness-corrected interval.
-- A unit is a completion x dimension as one judge rated it (its runs
-- averaged; positive framing only, as the other judge-human marts), or, for
-- the panel, the mean of the judges that rated it. Units whose human labels
-- are all NA or whose judge scores are all NA belong to neither set: they are
-- counted (n_human_na, n_judge_na), never dropped silently.
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

ratings as (
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

-- each unit also counts in its model's pooled row (model 'all'), its dimension's
-- pooled row (dimension 'all') and the row pooling both
poolings as (
    select
        flags.pool_model,
        flags.pool_dimension
    from (
        values (false, false), (true, false), (false, true), (true, true)
    ) as flags (pool_model, pool_dimension)
),

pooled as (
    select
        units.judge,
        units.is_panel,
        units.stratum,
        units.status,
        units.y,
        units.yhat,
        case when poolings.pool_model then 'all' else units.model end as model,
        case when poolings.pool_dimension then 'all' else units.dimension end as dimension
    from units
    cross join poolings
),

-- the group means, for the third central moments of the skewness-corrected interval
centred as (
    select
        *,
        y - avg(case when status = 'labelled' then y end)
            over (partition by judge, is_panel, model, dimension, stratum)
            as dy,
        yhat - avg(case when status = 'labelled' then yhat end)
            over (partition by judge, is_panel, model, dimension, stratum)
            as dh,
        yhat - avg(case when status = 'unlabelled' then yhat end)
            over (partition by judge, is_panel, model, dimension, stratum)
            as du
    from pooled
),

final as (
    select
        judge,
        is_panel,
        model,
        dimension,
        stratum,
        count(*) filter (where status = 'labelled') as n_labelled,
        avg(y) filter (where status = 'labelled') as mean_y,
        avg(yhat) filter (where status = 'labelled') as mean_yhat_labelled,
        var_pop(y) filter (where status = 'labelled') as var_y,
        var_pop(yhat) filter (where status = 'labelled') as var_yhat_labelled,
        covar_pop(y, yhat) filter (where status = 'labelled') as cov_y_yhat,
        count(*) filter (where status = 'unlabelled') as n_unlabelled,
        avg(yhat) filter (where status = 'unlabelled') as mean_yhat_unlabelled,
        var_pop(yhat) filter (where status = 'unlabelled') as var_yhat_unlabelled,
        avg(dy * dy * dy) filter (where status = 'labelled') as m3_y,
        avg(dy * dy * dh) filter (where status = 'labelled') as m3_y_y_yhat,
        avg(dy * dh * dh) filter (where status = 'labelled') as m3_y_yhat_yhat,
        avg(dh * dh * dh) filter (where status = 'labelled') as m3_yhat_labelled,
        avg(du * du * du) filter (where status = 'unlabelled') as m3_yhat_unlabelled,
        count(*) filter (where status = 'human_na') as n_human_na,
        count(*) filter (where status = 'judge_na') as n_judge_na
    from centred
    group by judge, is_panel, model, dimension, stratum
)

select * from final
