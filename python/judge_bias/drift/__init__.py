"""Did the judge change, and does it repeat itself? docs/drift.md has the definitions
and the measured coverage.

- ``versions``: judge_drift: two versions of a judge on the items both rated (shift,
  agreement, flips, accuracy change, a drift flag).
- ``stability``: judge_stability: reruns of one judge on one item (flip rate,
  within-item sd, pass/fail crossings).
- ``marts``: the dbt models' entry points of judge_drift, judge_stability and
  agreement_binary.
- ``settings``: the dbt vars the marts read, their defaults here and only here.
"""
