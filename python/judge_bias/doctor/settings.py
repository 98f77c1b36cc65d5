"""The doctor's defaults: the only home of them."""

# Records profiled per file: the first ones, so memory stays bounded whatever the
# file's size. CSV and JSON lines are still counted to the end (streamed, not kept);
# Parquet's count is its footer's. A JSON document is parsed whole, up to:
SAMPLE_RECORDS = 20_000
MAX_JSON_DOCUMENT_BYTES = 256 * 1024 * 1024
# Nested JSON is flattened to dotted columns down to this depth, at most this many.
MAX_DEPTH = 4
MAX_COLUMNS = 200
# Distinct values kept per column (beyond it: "many").
MAX_DISTINCT = 2_000
# The label budget: interval half-width on a model's mean score normalised to 0-1,
# its confidence level, and the residual sd assumed when the file has no pairs.
HALF_WIDTH = 0.05
CI_LEVEL = 0.95
ASSUMED_RESIDUAL_SD = 0.2
ASSUMED_CORRELATIONS = (0.5, 0.7, 0.9)
