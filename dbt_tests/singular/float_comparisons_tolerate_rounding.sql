-- float_le, float_eq and float_between (macros/floats.sql) accept what rounding
-- gives and refuse real differences: fails on each case where a macro's answer
-- is not the expected one. The seed only anchors the test in the DAG.
with

anchor as (
    select count(*) as n from {{ ref('model_aliases') }}
),

cases as (
    select
        cast(given.a as double) as a,
        cast(given.b as double) as b,
        given.expect_le,
        given.expect_eq
    from (
        values
        -- a weighted mean of one pre-aggregated label, 0.667 * 3 / 3, against it
        ('0.6670000000000001', '0.667', true, true),
        ('0.667', '0.6670000000000001', true, true),
        ('0.668', '0.667', false, false),
        ('0.666', '0.667', true, false),
        -- 0.1 + 0.2 against 0.3; near zero the absolute part decides
        ('0.30000000000000004', '0.3', true, true),
        ('1e-13', '0', true, true),
        ('1e-11', '0', false, false),
        -- relative at large magnitudes: 1e6 + 1e-4 is within 1e-9 * 1e6
        ('1000000.0001', '1000000', true, true),
        ('1000000.01', '1000000', false, false),
        ('-2', '-2', true, true),
        ('inf', 'inf', true, true)
    ) as given (a, b, expect_le, expect_eq)
),

results as (
    select
        cases.*,
        {{ float_le('cases.a', 'cases.b') }} as got_le,
        {{ float_eq('cases.a', 'cases.b') }} as got_eq,
        {{ float_between('cases.a', 'cases.b', 'cases.b') }} as got_between
    from cases
    cross join anchor
)

select * from results
where
    got_le <> expect_le
    or got_eq <> expect_eq
    or got_between <> expect_eq
