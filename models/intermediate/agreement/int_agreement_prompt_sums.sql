{{ config(incremental_by_prompt()) -}}
{{ load_prompt_dependencies() -}}
-- Per judge x dimension x prompt, sums over the judge's completions (positive
-- frame, both scores, runs averaged) of a = judge score, b = human score
-- (normalised): n, sum a, sum b, sum a^2, sum b^2, sum a*b. Interval alpha
-- between judge and humans, its calibrated version and the bootstrap over
-- prompts follow from them (agreement_counterfactual).
with

-- each completion's a and b, runs averaged (macros/run_means.sql)
{{ run_means(
    'completions',
    ref('fct_judge_ratings'),
    ['judge', 'prompt_id', 'model', 'dimension'],
    {'a': 'judge_score_norm', 'b': 'human_score_norm'},
    where="framing = 'positive'"
    ~ ' and judge_score_norm is not null and human_score_norm is not null'
    ~ (' and ' ~ load_prompt_condition() if is_incremental() else ''),
) }}

select
    judge,
    dimension,
    prompt_id,
    count(*) as n,
    sum(a) as sum_a,
    sum(b) as sum_b,
    sum(a * a) as sum_aa,
    sum(b * b) as sum_bb,
    sum(a * b) as sum_ab
from completions
group by judge, dimension, prompt_id
