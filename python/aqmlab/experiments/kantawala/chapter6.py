"""Seed 000, chapter 6 (in progress)."""

EXPERIMENTS: list = []
