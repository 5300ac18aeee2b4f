"""Reflection: the slow path that consolidates memories into summaries, and the context builder."""
