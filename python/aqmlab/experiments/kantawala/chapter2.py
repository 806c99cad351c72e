"""Seed 000, chapter 2 (in progress)."""

EXPERIMENTS: list = []
