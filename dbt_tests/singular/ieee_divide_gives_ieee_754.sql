-- ieee_divide (macros/engine.sql) gives IEEE 754 results on every adapter, as
-- DuckDB's `/` does: fails on each case where it does not (NaN = NaN is true on
-- DuckDB and Spark; null only where expected). The seed only anchors the test in
-- the DAG, so that it runs wherever the seed is built (both routes).
with

anchor as (
    select count(*) as n from {{ ref('model_aliases') }}
),

cases as (
    select
        cast(numerator as double) as numerator,
        cast(denominator as double) as denominator,
        cast(expected as double) as expected
    from (
        values
        ('1', '0', 'inf'),
        ('-2.5', '0', '-inf'),
        ('0', '0', 'nan'),
        ('nan', '0', 'nan'),
        ('inf', '0', 'inf'),
        (null, '0', null),
        ('3', '2', '1.5'),
        ('-1', '4', '-0.25'),
        ('1', null, null)
    ) as given (numerator, denominator, expected)
),

results as (
    select
        cases.*,
        {{ ieee_divide('cases.numerator', 'cases.denominator') }} as result
    from cases
    cross join anchor
)

select * from results
where not coalesce(result = expected, result is null and expected is null)
