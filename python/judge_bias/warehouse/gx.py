"""Great Expectations, imported so that pyspark cannot end the process.

With pyspark installed (the Spark lock) and grpc absent, importing Great
Expectations imports ``pyspark.sql.connect.utils``, whose doctest guard calls
``sys.exit(0)`` when ``__main__`` looks uninitialised (no ``__file__``, no
``__spec__``, not interactive): ``python -c``, ``python - < script`` and
pytest-xdist's workers. A green build then ended with the build record
``state: failed, stage: validation, message: "0"``. While Great Expectations is
imported here, ``sys.ps1`` is set as in an interactive session, so pyspark takes
its ordinary route (grpc missing: an ImportError, which Great Expectations
catches) as it does under a script. pyspark's FutureWarning on import (it does
not yet support pandas 3) is kept off the build's output: Great Expectations
imports pyspark for its Spark route, which the validation does not use.

The pandas batches are not fingerprinted (FINGERPRINT_BYTES): Great Expectations
hashes every row and column of a batch's dataframe (pandas' hash, then md5) into a
batch marker, ``pandas_data_fingerprint``, that no expectation and nothing of ours
reads, and does it twice per table (the batch, then the validator's own copy of
it). At 10M ratings, three tables validated on 500,000-row samples, that was 1.2
of the suites' 3.1 CPU s (fixed19); the findings are the same without it.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import Any

_ADDED_PS1 = not hasattr(sys, "ps1")
if _ADDED_PS1:
    sys.ps1 = ""
try:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "PySpark does not yet fully support", FutureWarning)
        import great_expectations as gx
        import great_expectations.expectations as gxe
        from great_expectations.data_context.types.base import ProgressBarsConfig
        from great_expectations.execution_engine import pandas_execution_engine
        from great_expectations.expectations.metadata_types import FailureSeverity
finally:
    if _ADDED_PS1:
        del sys.ps1

# Great Expectations' own rule: a dataframe of HASH_THRESHOLD bytes or more (1e9 in
# 1.x) is not fingerprinted; 0 bytes: none is
FINGERPRINT_BYTES = 0
_THRESHOLD_LOCK = threading.Lock()
_threshold_users = 0
_saved_threshold: Any = None


@contextlib.contextmanager
def no_fingerprints() -> Iterator[None]:
    """Great Expectations' HASH_THRESHOLD at FINGERPRINT_BYTES while the block runs,
    the process's own value back after the last overlapping block ends (review19d:
    set at import, it turned off the fingerprints of a user's own Great Expectations
    in the same process for good)."""
    global _threshold_users, _saved_threshold
    with _THRESHOLD_LOCK:
        if _threshold_users == 0:
            _saved_threshold = pandas_execution_engine.HASH_THRESHOLD
        pandas_execution_engine.HASH_THRESHOLD = FINGERPRINT_BYTES
        _threshold_users += 1
    try:
        yield
    finally:
        with _THRESHOLD_LOCK:
            _threshold_users -= 1
            if _threshold_users == 0:
                pandas_execution_engine.HASH_THRESHOLD = _saved_threshold


__all__ = ["FailureSeverity", "ProgressBarsConfig", "gx", "gxe", "no_fingerprints"]
