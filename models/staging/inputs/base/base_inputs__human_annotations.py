from judge_bias.loading import load_input


def model(dbt, session):
    return load_input(session, dbt.config.get("data_dir"), "human_annotations")
