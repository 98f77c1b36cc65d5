"""Agreement between judges and humans (marts in models/marts/agreement/):
``measures`` (Krippendorff's alpha, judge-human correlations and agreement),
``headline_alpha`` (the alpha a scale's level of measurement picks),
``clustered_correlation`` (prompt-level design effects of the correlations),
``correlation_notes`` (why a judge-human statistic is null),
``counterfactual`` (the judge-human alpha before and after calibration),
``self_vs_peer`` (prompt-clustered self vs peer tests under both framings)."""
