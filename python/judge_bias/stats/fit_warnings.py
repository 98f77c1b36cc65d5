"""The warnings of statsmodels' fits that the fits report themselves, ignored by a
filter installed once, never swapped in and out.

``warnings.catch_warnings()`` + ``simplefilter("ignore")`` around a fit replaced the
process's filters while the fit ran: dbt runs two Python models at once in threads
of one process, so the other model's warnings were dropped too (review20b found it
in glm's ``_autocov``; Python 3.11's filters are process-wide). The fits silence
numpy's floating-point warnings with ``np.errstate`` (this thread's), and these
statsmodels warnings with the narrow filters below: each says what the caller reads
from the results and puts in the mart's notes (the optimiser's convergence flag,
a covariance that is NaN, separation checked before the fit).
"""

from __future__ import annotations

import warnings

# (category name in statsmodels.tools.sm_exceptions, what the mart says instead)
IGNORED = (
    "ConvergenceWarning",  # bias_fits/pairwise notes: 'did not converge'
    "HessianInversionWarning",  # 'the Hessian is not invertible' / NaN covariance
    "PerfectSeparationWarning",  # pairwise: separation found by linear programming
)
MODULE = r"statsmodels\."


def ignore_fit_warnings() -> None:
    """Put the filters ignoring statsmodels' IGNORED warnings (raised from within
    statsmodels) in the process's list when they are not there: once a process,
    or again after a ``catch_warnings`` block that held them ended. Never removed."""
    from statsmodels.tools import sm_exceptions

    for name in IGNORED:
        category = getattr(sm_exceptions, name)
        present = any(
            f[0] == "ignore" and f[2] is category and f[3] is not None
            and f[3].pattern == MODULE
            for f in warnings.filters
        )  # fmt: skip
        if not present:
            warnings.filterwarnings("ignore", category=category, module=MODULE)
