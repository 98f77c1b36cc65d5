"""`judge-bias check`: a policy of rules over the built marts (no significant self-bias
above a bound, accuracy, position consistency, no drift, flip rate, model pairs that
must differ), one line per finding with its numbers, JUnit XML for CI, and an exit
code of its own (``settings.EXIT_FINDINGS``) apart from build and usage failures.

``policy`` parses the YAML, ``rules`` holds one registered function per rule,
``junit`` writes the XML, ``run`` evaluates a policy on a warehouse.
"""
