-- The ordered-logistic likelihood's count cells: rows per (dimension, grader,
-- model, score). A cell's log-likelihood is its count times one row's. One pass
-- over the ratings on every path: on an incremental warehouse it summed the item
-- cells kept by prompt until session 23, which made every append keep a table of
-- about one row per rating to save this pass (2 s): a 1% append at 10M paid
-- 30 s of node time in session 22 (contended), 5.9 s of node wall time in
-- session 23 (6.0 CPU s of SQL models saved by the change).
select
    dimension,
    grader,
    grader_type,
    model,
    score,
    count(*) as n
from {{ ref('int_glm_ratings') }}
where on_scale
group by dimension, grader, grader_type, model, score
