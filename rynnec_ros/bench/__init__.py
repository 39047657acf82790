"""Benchmarks behind ``rynnec-ros bench``: every speed claim of the project lives here, as JSON."""
