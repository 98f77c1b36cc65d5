{% test value_between(model, column_name, min_value, max_value) %}
    {#- Fails on every non-null value outside [min_value, max_value], beyond the
        tolerance of computed doubles (float_between, macros/floats.sql). -#}
select *
from {{ model }}
where {{ column_name }} is not null
    and not {{ float_between(column_name, min_value, max_value) }}
{% endtest %}
