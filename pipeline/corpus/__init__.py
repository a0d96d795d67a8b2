"""The versioned corpus and what reads it: the store, lineage, SQL views, charts and text views, the linter."""
