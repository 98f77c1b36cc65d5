{#- On an incremental warehouse (docs/incremental.md): the item cells
    (int_glm_item_counts, kept across loads by prompt) summed over the items:
    integer counts, so equal to the one pass over the ratings, the narrow item
    table read instead of every rating. A full build compiles as before. -#}
{%- set kept = incremental_on() -%}
-- The ordered-logistic likelihood's count cells: rows per (dimension, grader,
-- model, score). A cell's log-likelihood is its count times one row's.
select
    dimension,
    grader,
    grader_type,
    model,
    score,
    {% if kept %}cast(sum(n) as bigint){% else %}count(*){% endif %} as n
from {{ ref('int_glm_item_counts') if kept else ref('int_glm_ratings') }}
where {{ 'true' if kept else 'on_scale' }}
group by dimension, grader, grader_type, model, score
