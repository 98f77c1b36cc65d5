"""Did the judge change, and does it repeat itself? The judge_drift mart (two
versions of a judge on the items both rated: shift, agreement, flips, accuracy
change, a drift flag) and the judge_stability mart (reruns of one judge on one
item: flip rate, within-item sd, pass/fail crossings). Defaults in ``settings``;
docs/drift.md has the definitions and the measured coverage.
"""
