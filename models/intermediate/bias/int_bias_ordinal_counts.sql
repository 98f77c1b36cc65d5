-- The distinct rows of the ordinal fits (raw judge score, judge, self and
-- family flags, human reference) with how often each occurs: the ordered
-- logit's likelihood on them, weighted by n_rows, equals the one on all rows.
select
    dimension,
    judge,
    judge_family,
    is_self,
    is_same_family,
    judge_score,
    reference,
    count(*) as n_rows
from {{ ref('int_bias_ratings') }}
where reference_kind = 'human'
group by dimension, judge, judge_family, is_self, is_same_family, judge_score, reference
