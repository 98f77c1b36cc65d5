{{ config(enabled=target.type == 'spark' or var('ppi_pairs_engine', 'numpy') == 'sql') }}

-- The one pass over the pairs of PPI units that the two cross moments read
-- (int_comparison_cross_moments, int_ppi_stratum_cross_moments): per judge (or
-- panel) x pair of unit groups (model, dimension, stratum; the first the one that
-- sorts first) x the two units' label statuses, the pairs of units of one prompt
-- and the sums of the products of their centred scores, under each centring the
-- two models use (ppi_pair_centrings). The stratum model's pairs (two dimensions
-- of one completion) are the comparison model's pairs of one model, so the units
-- are paired once (~64M pairs at 10M ratings; each model paired them itself before)
-- and each model sums these few thousand rows into its own groups.
with

-- the units with a label status the estimators use (human_na and judge_na are
-- counted in int_ppi_stratum_moments, never paired)
units as (
    select * from {{ ref('int_ppi_units') }}
    where status in ('labelled', 'unlabelled')
),

-- the unit groups (int_ppi_unit_groups, shared with the numpy model): per row of
-- one model, its key (two units of one prompt differ in model or dimension, so
-- comparing the keys of their groups orders them as comparing the strings, and a
-- pair of one model has its dimensions in order), its pair group (judge,
-- is_panel) and the means of its three centrings' rows. A few hundred rows, so
-- the units are matched to them in one join on the string keys
unit_groups as (
    select * from {{ ref('int_ppi_unit_groups') }}
),

-- each unit centred on its group's three rows: dy a labelled unit's human score
-- minus the row's labelled mean (NULL unlabelled), dj its judge score minus the
-- mean of the units of its label status (dh labelled, du unlabelled: one column,
-- the status in unit_code), dg (own and dimensions) the judge score
-- minus the mean over all the row's units; unit_code its unit key and label status
-- in one integer (2 unit_key + 1 labelled, 0 unlabelled). Sorted by pair_group and
-- prompt: the join below then finds a prompt's units side by side, and its rows
-- are narrow (32-bit keys, no strings but prompt_id): at 10M ratings the join
-- spills 207 MB to disk where it spilled 443 MB, and the model took 23.8 -> 13.6
-- CPU s (with 6 GB and no spill a wider version took 19.0 unsorted, 14.6 sorted)
centred as (
    select
        unit_groups.pair_group,
        units.prompt_id,
        unit_groups.unit_key * 2 + case when units.status = 'labelled' then 1 else 0 end
            as unit_code,
        {{ ppi_centred_scores() }}
    from units
    inner join unit_groups
        on
            units.judge = unit_groups.judge
            and units.is_panel = unit_groups.is_panel
            and units.model = unit_groups.model
            and units.dimension = unit_groups.dimension
            and units.stratum = unit_groups.stratum
    order by unit_groups.pair_group, units.prompt_id
),

-- the units of one prompt paired once (a self-join on pair_group and prompt_id; the
-- first unit the one of the smaller unit key, so of the smaller code) and the
-- products summed per pair of unit codes: a few thousand groups, where the pairs are
-- ~64M at 10M ratings
pair_sums as (
    select
        unit_a.unit_code as code_a,
        unit_b.unit_code as code_b,
        count(*) as n_pairs,
        {{ ppi_pair_product_sums() }}
    from centred as unit_a
    inner join centred as unit_b
        on
            unit_a.pair_group = unit_b.pair_group
            and unit_a.prompt_id = unit_b.prompt_id
            and unit_a.unit_code < unit_b.unit_code
    group by unit_a.unit_code, unit_b.unit_code
),

-- each unit group's two codes
unit_codes as (
    select
        unit_groups.*,
        statuses.is_labelled,
        unit_groups.unit_key * 2 + case when statuses.is_labelled then 1 else 0 end
            as unit_code
    from unit_groups
    cross join (values (false), (true)) as statuses (is_labelled)
),

-- the models centring (int_ppi_stratum_cross_moments' model `all`) is kept for the
-- pairs of one model only (ppi_pair_sum_columns)
final as (
    select
        unit_a.judge,
        unit_a.is_panel,
        unit_a.model as model_a,
        unit_a.dimension as dimension_a,
        unit_a.stratum as stratum_a,
        unit_b.model as model_b,
        unit_b.dimension as dimension_b,
        unit_b.stratum as stratum_b,
        unit_a.is_labelled as is_labelled_a,
        unit_b.is_labelled as is_labelled_b,
        pair_sums.n_pairs,
        {{ ppi_pair_sum_columns('pair_sums') }}
    from pair_sums
    inner join unit_codes as unit_a on pair_sums.code_a = unit_a.unit_code
    inner join unit_codes as unit_b on pair_sums.code_b = unit_b.unit_code
)

select * from final
