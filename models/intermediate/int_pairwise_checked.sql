-- PLACEHOLDER (helper 5B): zero rows with exactly the columns and types of
-- int_pairwise_checked in /work/briefs/pairwise_interface.md, so that the
-- pairwise marts build on this branch. The lead replaces it at merge with
-- helper 5A's model (staging and checks of pairwise_judgments).
select
    cast(null as integer) as row_number,
    cast(null as varchar) as judge,
    cast(null as varchar) as judge_family,
    cast(null as varchar) as prompt_id,
    cast(null as varchar) as model_first,
    cast(null as varchar) as model_first_family,
    cast(null as varchar) as model_second,
    cast(null as varchar) as model_second_family,
    cast(null as varchar) as run_id,
    cast(null as varchar) as verdict,
    cast(null as double) as p_first,
    cast(null as varchar) as human_verdict,
    cast(null as double) as perplexity_first,
    cast(null as double) as perplexity_second,
    cast(null as double) as length_first,
    cast(null as double) as length_second,
    cast(null as boolean) as is_self_first,
    cast(null as boolean) as is_self_second,
    cast(null as varchar) as pair_key,
    cast(null as boolean) as has_swapped,
    cast(null as varchar) as reject_code,
    cast(null as varchar) as reject_reason
where false
