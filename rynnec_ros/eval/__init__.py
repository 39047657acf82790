"""Benchmark scoring: RynnEC-Bench, EmbSpatial-Bench, RoboBench."""
