from judge_bias.pairwise.marts import pairwise_joint_bias


def model(dbt, session):
    # the joint logit's cells, per judge x prompt x regressors (SQL)
    # dbt passes only the config keys and parents it sees as literal calls
    config = {
        "memory_budget": dbt.config.get("memory_budget"),
    }
    relations = {
        "pairwise_bias": dbt.ref("pairwise_bias"),
        "int_pairwise_logit_cells": dbt.ref("int_pairwise_logit_cells"),
    }
    return pairwise_joint_bias(relations.__getitem__, config.get, session)
