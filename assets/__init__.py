"""Dagster only: thin assets, resources, partitions, checks, schedules, definitions; and the CLI."""
