"""Synthetic RGB-D scenes, their ground-truth labels, spatial QA generation and bag I/O (offline use)."""
