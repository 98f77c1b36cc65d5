"""``judge-bias doctor FILE``: what a file holds and what to do with it.

It reads a sample of any evaluation file (a known importer's format, or a generic
CSV, JSON, JSON lines or Parquet file), says what each column looks like (judge,
model, score, verdict, human label, length, id), which importer and command fit,
which marts the data will fill and which it cannot (and why), and how many human
labels PPI and the bias regression need for a given precision.

- ``sample``: read the file in bounded memory (settings.SAMPLE_RECORDS).
- ``columns``: profile the sampled records' columns and guess their kinds.
- ``formats``: the known formats, each recognised by a signature.
- ``budget``: the label-budget formulas (human-only, PPI, regression term).
- ``diagnose``: puts them together; ``render`` prints the report.
- ``settings``: the doctor's defaults, their only home.
"""

from judge_bias.doctor.diagnose import Diagnosis, diagnose, render

__all__ = ["Diagnosis", "diagnose", "render"]
