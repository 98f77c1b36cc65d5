from judge_bias.agreement.marts import agreement_counterfactual


def model(dbt, session):
    # per judge x dimension x prompt sums (SQL)
    # dbt passes only the config keys and parents it sees as literal calls
    config = {
        "memory_budget": dbt.config.get("memory_budget"),
    }
    relations = {
        "int_agreement_prompt_sums": dbt.ref("int_agreement_prompt_sums"),
    }
    return agreement_counterfactual(relations.__getitem__, config.get, session)
