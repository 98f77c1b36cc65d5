{% test same_row_count(model, to, to_where=none) %}
    {#- Fails (one row: both counts) unless the model has as many rows as `to`
        (filtered by `to_where`): the key test of a table that carries its parent's
        rows 1:1. With the parent's key unique and the model's unique source row
        number, a key repeated by a fan-out of a join adds rows (and one lost by a
        join loses some): two counts, no GROUP BY over the key's text. -#}
select n_model, n_to
from (select count(*) as n_model from {{ model }}) as counted_model
cross join (
    select count(*) as n_to from {{ to }}
    {%- if to_where %} where {{ to_where }}{% endif %}
) as counted_to
where n_model <> n_to
{% endtest %}
