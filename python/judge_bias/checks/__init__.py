"""`judge-bias check`: a policy of rules over the built marts (no significant self-bias
above a bound, accuracy, position consistency, no drift, flip rate, model pairs that
must differ), one line per finding with its numbers, JUnit XML for CI, and an exit
code of its own (``settings.EXIT_FINDINGS``) apart from build and usage failures.

- ``policy``: parses the policy YAML (the judges in production and the rules).
- ``rules``: one registered function per rule, each reading its mart.
- ``junit``: writes the JUnit XML CI systems read.
- ``run``: evaluates a policy on a warehouse (read-only) and the summary line.
- ``settings``: the defaults: exit code, default policy, the marts each rule reads.
"""
