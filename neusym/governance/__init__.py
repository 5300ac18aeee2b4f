"""Governance: admission, screening, conflicts, dedup, lifecycle, forgetting, audit and review."""

from neusym.governance.decisions import Action, AuditAction, Decision
from neusym.governance.governor import Governor

__all__ = ["Action", "AuditAction", "Decision", "Governor"]
