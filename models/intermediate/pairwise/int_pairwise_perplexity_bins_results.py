from judge_bias.pairwise.marts import pairwise_perplexity_bins


def model(dbt, session):
    # per judge x prompt x log-perplexity difference counts (SQL)
    # dbt passes only the config keys and parents it sees as literal calls
    config = {
        "memory_budget": dbt.config.get("memory_budget"),
    }
    relations = {
        "int_pairwise_perplexity_cells": dbt.ref("int_pairwise_perplexity_cells"),
    }
    return pairwise_perplexity_bins(relations.__getitem__, config.get, session)
