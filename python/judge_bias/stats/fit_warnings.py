"""The warnings of statsmodels' fits that the fits report themselves, ignored by a
filter installed once, never swapped in and out.

``warnings.catch_warnings()`` + ``simplefilter("ignore")`` around a fit replaced the
process's filters while the fit ran: dbt runs two Python models at once in threads
of one process, so the other model's warnings were dropped too (review20b found it
in glm's ``_autocov``; Python 3.11's filters are process-wide). The fits silence
numpy's floating-point warnings with ``np.errstate`` (this thread's), and these
statsmodels warnings with the narrow filters below: each says what the caller reads
from the results and puts in the mart's notes (the optimiser's convergence flag,
a covariance that is NaN; the pairwise fits check separation before fitting, the
ordinal logit route does not: its estimates then carry huge standard errors).
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


def _decides(category: type[Warning]) -> bool:
    """Whether this module's filter is the first in the process's list that matches
    a ``category`` warning raised from statsmodels (an earlier "always" or "default"
    for Warning, e.g. glm's ``warnings_to_notes`` recording in another thread, would
    show the fit's warnings instead: review21b)."""
    for action, message, cat, module, _lineno in warnings.filters:
        if not issubclass(category, cat) or (message is not None and message.pattern):
            continue
        if module is not None and not module.match("statsmodels.base.model"):
            continue
        return (
            action == "ignore"
            and cat is category
            and module is not None
            and (module.pattern == MODULE)
        )
    return False


def ignore_fit_warnings() -> None:
    """Put the filters ignoring statsmodels' IGNORED warnings (raised from within
    statsmodels) first in the process's list when they do not already decide them:
    once a process, again after a ``catch_warnings`` block that held them ended, or
    ahead of a filter another thread put first (its "always" would show them). Never
    removed: after a fit, these three statsmodels warnings are ignored for the rest
    of the process (a notebook's own statsmodels fits too; ``warnings.simplefilter
    ("always")`` added later shows them again)."""
    from statsmodels.tools import sm_exceptions

    for name in IGNORED:
        category = getattr(sm_exceptions, name)
        if not _decides(category):
            warnings.filterwarnings("ignore", category=category, module=MODULE)
