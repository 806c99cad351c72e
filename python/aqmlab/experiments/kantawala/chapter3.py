"""Seed 000, chapter 3 (in progress)."""

EXPERIMENTS: list = []
