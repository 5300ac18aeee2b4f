"""Token counting for reflection and context budgets.

Budgets are only worth something if they are counted the way the model counts, so tiktoken (``cl100k_base``) is
used when an encoding is available. tiktoken downloads encodings on first use, which fails offline; llama-index-core
ships ``cl100k_base`` in its package data, so when ``TIKTOKEN_CACHE_DIR`` is unset we point it there. The folder is
located with :func:`importlib.util.find_spec` *without importing llama_index* (the engine never imports the
frameworks). When no encoding can be loaded we fall back to :class:`ApproxCounter` (``ceil(len(text) / 4)``, the
usual English chars-per-token rule) and say so in ``exact`` so callers and reports can tell.
"""

from __future__ import annotations

import importlib.util
import logging
import math
import os
import threading
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ApproxCounter",
    "ReflectionBudget",
    "TiktokenCounter",
    "TokenCounter",
    "bundled_tiktoken_cache",
    "ensure_tiktoken_cache",
    "get_token_counter",
]

log = logging.getLogger(__name__)

DEFAULT_ENCODING = "cl100k_base"


@runtime_checkable
class TokenCounter(Protocol):
    """Counts and truncates text in model tokens."""

    name: str
    exact: bool

    def count(self, text: str) -> int: ...

    def truncate(self, text: str, max_tokens: int) -> str: ...


class ApproxCounter:
    """Documented approximation used when tiktoken has no encoding: one token per four characters, rounded up.

    It over-counts short words and under-counts CJK text; it exists so budgets still bound prompt size when the
    real tokenizer is missing, not to be exact.
    """

    name = "approx-chars/4"
    exact = False

    def count(self, text: str) -> int:
        return math.ceil(len(text) / 4) if text else 0

    def truncate(self, text: str, max_tokens: int) -> str:
        if max_tokens <= 0:
            return ""
        return text if self.count(text) <= max_tokens else text[: max_tokens * 4]


class TiktokenCounter:
    """Exact counts with a tiktoken encoding (``cl100k_base`` by default)."""

    exact = True

    def __init__(self, encoding: Any) -> None:
        self._enc = encoding
        self.name = f"tiktoken:{encoding.name}"

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._enc.encode(text, disallowed_special=()))

    def truncate(self, text: str, max_tokens: int) -> str:
        if max_tokens <= 0:
            return ""
        ids = self._enc.encode(text, disallowed_special=())
        if len(ids) <= max_tokens:
            return text
        cut = str(self._enc.decode(ids[:max_tokens]))
        # decoding a prefix can split a multi-byte character; re-encoding may then exceed by one, so trim until it fits
        while cut and self.count(cut) > max_tokens:
            cut = cut[:-1]
        return cut


def bundled_tiktoken_cache() -> Path | None:
    """llama-index-core's bundled tiktoken cache folder, found without importing llama_index.core."""
    try:
        spec = importlib.util.find_spec("llama_index.core")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for base in spec.submodule_search_locations:
        path = Path(base) / "_static" / "tiktoken_cache"
        if path.is_dir():
            return path
    return None


def ensure_tiktoken_cache() -> str | None:
    """Set ``TIKTOKEN_CACHE_DIR`` to the bundled cache when the user has not set it. Returns the value in effect."""
    current = os.environ.get("TIKTOKEN_CACHE_DIR")
    if current:
        return current
    bundled = bundled_tiktoken_cache()
    if bundled is not None:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)
        return str(bundled)
    return None


_lock = threading.Lock()
_cache: dict[str, TokenCounter] = {}


def get_token_counter(encoding: str = DEFAULT_ENCODING) -> TokenCounter:
    """The shared counter for ``encoding``: tiktoken when the encoding loads, else :class:`ApproxCounter`.

    Cached per encoding because loading an encoding costs ~0.5 s and a failed load may try the network.
    """
    with _lock:
        found = _cache.get(encoding)
        if found is not None:
            return found
        ensure_tiktoken_cache()
        counter: TokenCounter
        try:
            import tiktoken

            counter = TiktokenCounter(tiktoken.get_encoding(encoding))
        except Exception as err:  # noqa: BLE001 - missing package, no network, unknown encoding: all mean "approximate"
            log.warning("tiktoken encoding %s unavailable (%s: %s); using the approximate len/4 token counter",
                        encoding, type(err).__name__, str(err)[:200])
            counter = ApproxCounter()
        _cache[encoding] = counter
        return counter


class ReflectionBudget(BaseModel):
    """Token budgets per reflection call (counted with :func:`get_token_counter`).

    ``input_tokens`` bounds every prompt (system + user); ``output_tokens`` bounds every summary. The prompt must
    hold at least two summaries, or summarising summaries could never converge.
    """

    model_config = ConfigDict(frozen=True)

    input_tokens: int = Field(default=3000, ge=128)
    output_tokens: int = Field(default=400, ge=16)
    max_levels: int = Field(default=8, ge=1)
