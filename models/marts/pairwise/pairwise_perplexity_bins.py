from judge_bias.limits import Budget, within_budget
from judge_bias.pairwise.reference.rates import PERPLEXITY_BIN_COLUMNS
from judge_bias.pairwise.sums import PERPLEXITY_CELL_BYTES, perplexity_bins_from_cells


def model(dbt, session):
    # per judge x prompt x log-perplexity difference counts, aggregated in SQL; over
    # the memory budget: no bins (pairwise_bias.notes says why), never a kill
    budget = Budget.from_config(dbt.config.get("memory_budget"))
    return within_budget(
        dbt.ref("int_pairwise_perplexity_cells"), budget, "pairwise perplexity cells",
        PERPLEXITY_CELL_BYTES, perplexity_bins_from_cells, "judge", PERPLEXITY_BIN_COLUMNS,
    ).dropna(subset=["bin"])  # fmt: skip
