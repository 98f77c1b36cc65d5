-- PLACEHOLDER (helper 5B): zero rows with exactly the columns and types of
-- int_perturbation_checked in /work/briefs/pairwise_interface.md, so that the
-- perturbation mart builds on this branch. The lead replaces it at merge with
-- helper 5A's model (staging and checks of perturbation_judgments).
select
    cast(null as integer) as row_number,
    cast(null as varchar) as judge,
    cast(null as varchar) as judge_family,
    cast(null as varchar) as item_id,
    cast(null as varchar) as bias_type,
    cast(null as varchar) as condition,
    cast(null as varchar) as run_id,
    cast(null as varchar) as verdict,
    cast(null as double) as score,
    cast(null as varchar) as ground_truth,
    cast(null as varchar) as reject_code,
    cast(null as varchar) as reject_reason
where false
