"""Records and settings every layer shares: config, records, errors, atomic storage, redaction, the
error-budget rule, the composition plan, measured speed-ups, the servers file and near-duplicate similarity."""
