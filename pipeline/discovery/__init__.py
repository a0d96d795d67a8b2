"""Per-server discovery: probe the live state, find the dependency graph, sample chains, explain chainability,
check a registered server."""
