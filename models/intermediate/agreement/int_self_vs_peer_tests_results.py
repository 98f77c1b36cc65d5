from judge_bias.agreement.marts import self_vs_peer_tests


def model(dbt, session):
    # S, R and G per judge x framing x item (SQL)
    # dbt passes only the config keys and parents it sees as literal calls
    config = {
        "memory_budget": dbt.config.get("memory_budget"),
    }
    relations = {
        "int_self_vs_peer_items": dbt.ref("int_self_vs_peer_items"),
    }
    return self_vs_peer_tests(relations.__getitem__, config.get, session)
