"""Reflection: the slow path that consolidates memories into summaries, and the context builder.

Public pieces: :class:`LLMReflector` / :class:`ExtractiveReflector` with :func:`reflect_records` (hierarchical,
budgeted), :class:`ReflectionScheduler` + :class:`ReflectionPolicy` (background triggers), :class:`ContextBuilder`
(prompt context within a token budget), :class:`QueryRewriter`, and :class:`Reflection` (what ``reflect``
returns). The service behind ``mem.reflection`` (``reflect``, ``session_end``, ``build_context``,
``rewrite_query``, ``enable_auto``) is :mod:`neusym.services.reflection`.
"""

from neusym.reflection.api import Reflection
from neusym.reflection.context import BuiltContext, ContextBuilder, ContextItem
from neusym.reflection.extractive import ExtractiveReflector
from neusym.reflection.prompts import PROMPT_VERSION, ReflectionOutput
from neusym.reflection.quality import QualityReport, check_quality
from neusym.reflection.reflector import LLMReflector, ReflectionDraft, ReflectionError, reflect_records
from neusym.reflection.rewrite import QueryRewriter, RewriteResult, looks_vague
from neusym.reflection.tokens import ReflectionBudget, TokenCounter, get_token_counter
from neusym.reflection.triggers import ReflectionJob, ReflectionPolicy, ReflectionScheduler

__all__ = [
    "PROMPT_VERSION",
    "BuiltContext",
    "ContextBuilder",
    "ContextItem",
    "ExtractiveReflector",
    "LLMReflector",
    "QualityReport",
    "QueryRewriter",
    "Reflection",
    "ReflectionBudget",
    "ReflectionDraft",
    "ReflectionError",
    "ReflectionJob",
    "ReflectionOutput",
    "ReflectionPolicy",
    "ReflectionScheduler",
    "RewriteResult",
    "TokenCounter",
    "check_quality",
    "get_token_counter",
    "looks_vague",
    "reflect_records",
]
