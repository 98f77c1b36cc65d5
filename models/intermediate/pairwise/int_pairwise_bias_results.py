from judge_bias.pairwise.marts import pairwise_bias


def model(dbt, session):
    # per judge x opponent x prompt rate sums, (verdict, human verdict) counts, logit cells (SQL)
    # dbt passes only the config keys and parents it sees as literal calls
    config = {
        "memory_budget": dbt.config.get("memory_budget"),
    }
    relations = {
        "int_pairwise_prompt_sums": dbt.ref("int_pairwise_prompt_sums"),
        "int_pairwise_kappa_counts": dbt.ref("int_pairwise_kappa_counts"),
        "int_pairwise_logit_cells": dbt.ref("int_pairwise_logit_cells"),
    }
    return pairwise_bias(relations.__getitem__, config.get, session)
