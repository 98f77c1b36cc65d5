"""int_bias_results as its dbt model file calls it: ``ref(name)`` gives a parent
relation, ``get(key)`` a config value, ``session`` the DuckDB connection."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from judge_bias.bias.analyses import (
    GRAIN,
    inputs_from_tables,
    read_statistics,
    results_long,
    run_analyses,
    settings_from_config,
    skipped_analyses,
)
from judge_bias.warehouse.frames import to_pandas

# the statistics each grain's fits read: per cell (HC0, HC1), per cell and prompt
# (cluster); HC3 needs each row's leverage and reads the rows
STATISTICS = {"cell": "int_bias_cell_stats", "prompt": "int_bias_prompt_stats"}
ROWS = "int_bias_ratings"


def results_from_relations(
    ref: Callable[[str], object], get: Callable[[str], object], session: object = None
) -> pd.DataFrame:
    """Every registered analysis on the statistics of the se_type's grain, within the
    memory budget (over it: a note for every analysis), in the long format of
    int_bias_results."""
    settings = settings_from_config(get)
    grain = GRAIN[settings.se_type]
    stats = ref(STATISTICS.get(grain, ROWS))
    model_means = to_pandas(ref("int_bias_model_means"))
    stats, n_left_out, note = read_statistics(stats, grain, model_means, settings, session)
    if note:
        return results_long(*skipped_analyses(note, settings))
    ordinal = to_pandas(ref("int_bias_ordinal_counts"))
    # the gam fit needs one reference value per statistics row: cell-grain
    # statistics split by reference value (prompt and row grain have it already)
    reference_stats = None
    if grain == "cell":
        reference_stats, _, note = read_statistics(
            ref("int_bias_reference_stats"), grain, model_means, settings, session
        )
    inputs = inputs_from_tables(stats, model_means, ordinal, n_left_out, reference_stats)
    if grain == "cell" and note:
        inputs.reference_note = note  # over the budget: the gam fit is skipped with it
    estimates, fits = run_analyses(inputs, settings)
    return results_long(estimates, fits)
