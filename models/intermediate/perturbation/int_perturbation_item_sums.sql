-- Per judge x bias type x item, the sums the CALM rates of perturbation_bias are
-- computed from (issue 17: the judgments stay in SQL). A unit is one item of one
-- run; its original judgment is compared with its repeat and its perturbed one of
-- the same run. Per item: units comparable (d) and agreeing (y) for each rate,
-- units scored in both conditions and their score sums (the bootstrap over items
-- resamples these), and the verdicts given (a bias type without any is scored only).
with

judgments as (
    select
        judge,
        bias_type,
        item_id,
        run_id,
        condition,
        verdict,
        score,
        ground_truth
    from {{ ref('int_perturbation_checked') }}
    where reject_code is null
),

-- one row per unit: accepted rows are unique per judge, item, bias type,
-- condition and run, so each max() sees at most one value
units as (
    select
        judge,
        bias_type,
        item_id,
        run_id,
        max(case when condition = 'original' then verdict end) as verdict_original,
        max(case when condition = 'repeat' then verdict end) as verdict_repeat,
        max(case when condition = 'perturbed' then verdict end) as verdict_perturbed,
        max(case when condition = 'original' then score end) as score_original,
        max(case when condition = 'perturbed' then score end) as score_perturbed,
        max(case when condition = 'original' then ground_truth end) as truth_original,
        -- the perturbed judgment's ground truth, else the original's
        coalesce(
            max(case when condition = 'perturbed' then ground_truth end),
            max(case when condition = 'original' then ground_truth end)
        ) as truth_perturbed,
        count(verdict) as n_verdicts
    from judgments
    group by judge, bias_type, item_id, run_id
),

compared as (
    select
        judge,
        bias_type,
        item_id,
        n_verdicts,
        score_original,
        score_perturbed,
        verdict_original is not null and verdict_perturbed is not null as robustness_d,
        coalesce(verdict_original = verdict_perturbed, false) as robustness_y,
        verdict_original is not null and verdict_repeat is not null as consistency_d,
        coalesce(verdict_original = verdict_repeat, false) as consistency_y,
        verdict_original is not null and truth_original is not null as accuracy_original_d,
        coalesce(verdict_original = truth_original, false) as accuracy_original_y,
        verdict_perturbed is not null and truth_perturbed is not null as accuracy_perturbed_d,
        coalesce(verdict_perturbed = truth_perturbed, false) as accuracy_perturbed_y,
        score_original is not null and score_perturbed is not null as scored
    from units
),

final as (
    select
        judge,
        bias_type,
        item_id,
        count(*) as n_units,
        sum(n_verdicts) as n_verdicts,
        sum(case when robustness_d then 1 else 0 end) as robustness_d,
        sum(case when robustness_y then 1 else 0 end) as robustness_y,
        sum(case when consistency_d then 1 else 0 end) as consistency_d,
        sum(case when consistency_y then 1 else 0 end) as consistency_y,
        sum(case when accuracy_original_d then 1 else 0 end) as accuracy_original_d,
        sum(case when accuracy_original_y then 1 else 0 end) as accuracy_original_y,
        sum(case when accuracy_perturbed_d then 1 else 0 end) as accuracy_perturbed_d,
        sum(case when accuracy_perturbed_y then 1 else 0 end) as accuracy_perturbed_y,
        sum(case when scored then 1 else 0 end) as n_scored,
        sum(case when scored then score_original end) as sum_score_original,
        sum(case when scored then score_perturbed end) as sum_score_perturbed
    from compared
    group by judge, bias_type, item_id
)

select * from final
