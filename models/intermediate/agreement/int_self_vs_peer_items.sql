-- One row per judge x framing x (prompt, dimension) on which the judge scored
-- its own model's completion: S (that score), R (mean score the other judges
-- gave the same completion under the positive frame) and G (mean score the
-- judge gave the other models' completions of the item under the frame). Runs
-- are averaged first. self_vs_peer_tests runs the t-tests on it.
with

scored as (
    select
        judge,
        framing,
        prompt_id,
        model,
        dimension,
        avg(judge_score_norm) as score
    from {{ ref('fct_judge_ratings') }}
    where judge_score_norm is not null
    group by judge, framing, prompt_id, model, dimension
),

own as (
    select
        judge,
        framing,
        prompt_id,
        dimension,
        score as s
    from scored
    where judge = model
),

received as (
    select
        own.judge,
        own.framing,
        own.prompt_id,
        own.dimension,
        avg(peer.score) as r
    from own
    inner join scored as peer
        on
            own.judge = peer.model
            and own.prompt_id = peer.prompt_id
            and own.dimension = peer.dimension
            and peer.framing = 'positive'
            and own.judge != peer.judge
    group by own.judge, own.framing, own.prompt_id, own.dimension
),

given as (
    select
        judge,
        framing,
        prompt_id,
        dimension,
        avg(score) as g
    from scored
    where judge != model
    group by judge, framing, prompt_id, dimension
)

select
    own.judge,
    own.framing,
    own.prompt_id,
    own.dimension,
    own.s,
    received.r,
    given.g
from own
inner join received
    on
        own.judge = received.judge
        and own.framing = received.framing
        and own.prompt_id = received.prompt_id
        and own.dimension = received.dimension
inner join given
    on
        own.judge = given.judge
        and own.framing = given.framing
        and own.prompt_id = given.prompt_id
        and own.dimension = given.dimension
