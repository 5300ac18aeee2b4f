"""Symbolic side: the property graph (source of truth) and the only place Cypher lives."""
