from judge_bias.agreement.self_vs_peer import self_vs_peer_tests
from judge_bias.warehouse.frames import to_pandas


def model(dbt, session):
    # S, R and G per judge x framing x item are computed in SQL (int_self_vs_peer_items)
    return self_vs_peer_tests(items=to_pandas(dbt.ref("int_self_vs_peer_items")))
