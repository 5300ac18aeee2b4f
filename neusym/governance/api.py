"""Governance methods of :class:`neusym.NeuSymMemory` (forget, curate, review, rollback, ...).

Kept as a mixin so the facade stays a thin delegate and governance lives in one package.
"""

from __future__ import annotations

__all__ = ["GovernanceAPI"]


class GovernanceAPI:
    """Mixed into NeuSymMemory; relies on its ``store``, ``derived``, ``embedder``, ``governor`` attributes."""
