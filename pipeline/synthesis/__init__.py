"""Per-server synthesis: grounded requests (dry-run), live conversation simulation, replay validation."""
