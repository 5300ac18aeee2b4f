"""Governance: admission, screening, conflicts, dedup, lifecycle, forgetting, audit and review."""

from neusym.governance.decisions import Action, AuditAction, Decision, Flag
from neusym.governance.forgetting import ForgetItem, ForgetPreview, ForgetReport
from neusym.governance.governor import Governor
from neusym.governance.lifecycle import JanitorReport
from neusym.governance.policy import GovernancePolicy
from neusym.governance.review import ReviewItem
from neusym.governance.screening import Screener, ScreeningResult

__all__ = [
    "Action",
    "AuditAction",
    "Decision",
    "Flag",
    "ForgetItem",
    "ForgetPreview",
    "ForgetReport",
    "GovernancePolicy",
    "Governor",
    "JanitorReport",
    "ReviewItem",
    "Screener",
    "ScreeningResult",
]
