"""Reflection (slow path) and context-building methods of :class:`neusym.NeuSymMemory`."""

from __future__ import annotations

__all__ = ["ReflectionAPI"]


class ReflectionAPI:
    """Mixed into NeuSymMemory; relies on its ``store``, ``derived``, ``embedder``, ``llm`` attributes."""
