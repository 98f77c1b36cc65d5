from judge_bias.glm.dbt import results_from_relations


def model(dbt, session):
    # the GLM count tables (SQL)
    # dbt passes only the config keys and parents it sees as literal calls
    config = {
        "glm_models": dbt.config.get("glm_models"),
        "glm_draws": dbt.config.get("glm_draws"),
        "glm_warmup": dbt.config.get("glm_warmup"),
        "glm_chains": dbt.config.get("glm_chains"),
        "glm_seed": dbt.config.get("glm_seed"),
        "glm_target_accept": dbt.config.get("glm_target_accept"),
        "glm_priors": dbt.config.get("glm_priors"),
        "glm_agreement_draws": dbt.config.get("glm_agreement_draws"),
        "ci_level": dbt.config.get("ci_level"),
        "memory_budget": dbt.config.get("memory_budget"),
    }
    relations = {
        "int_glm_families": dbt.ref("int_glm_families"),
        "int_glm_ratings": dbt.ref("int_glm_ratings"),
        "int_glm_rating_counts": dbt.ref("int_glm_rating_counts"),
        "int_glm_item_counts": dbt.ref("int_glm_item_counts"),
        "int_glm_pairwise_counts": dbt.ref("int_glm_pairwise_counts"),
        "int_glm_scale_points": dbt.ref("int_glm_scale_points"),
        "int_glm_excluded": dbt.ref("int_glm_excluded"),
    }
    return results_from_relations(relations.__getitem__, config.get, session)
