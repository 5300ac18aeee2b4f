"""Forget confirmations: a preview hands out a single-use token; only the token applies the forget.

Why a token rather than ``confirm=true``: a model that sets ``confirm=true`` on its first call would forget without
anyone having seen what goes. The token names exactly the previewed memories (a forget by topic applies the
previewed ids, not a fresh search that could match more), is bound to the tenant that asked, expires, and works
once. Tokens live in the server process: a pending confirmation is not state worth persisting; after a restart
the client previews again.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from neusym.errors import InvalidInputError
from neusym.record import Scope

if TYPE_CHECKING:
    from neusym.governance.forgetting import ForgetPreview

__all__ = ["Confirmations", "PendingForget"]

_MAX_PENDING = 1024


@dataclass(frozen=True)
class PendingForget:
    scope: Scope
    ids: tuple[str, ...]
    hard: bool
    reason: str
    preview: ForgetPreview | None
    expires_at: float


class Confirmations:
    def __init__(self, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        self._pending: OrderedDict[str, PendingForget] = OrderedDict()
        self._lock = threading.Lock()

    def issue(self, scope: Scope, ids: list[str], *, hard: bool, reason: str,
              preview: ForgetPreview | None) -> str:
        token = "fc_" + secrets.token_urlsafe(18)
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            while len(self._pending) >= _MAX_PENDING:
                self._pending.popitem(last=False)
            self._pending[token] = PendingForget(scope, tuple(ids), hard, reason, preview, now + self.ttl_s)
        return token

    def redeem(self, token: str, user_id: str) -> PendingForget:
        """The pending forget for ``token`` (single use). Unknown, expired, used and other tenants' tokens all
        fail alike, so a token is no oracle for what another tenant previewed."""
        with self._lock:
            self._expire(time.monotonic())
            pending = self._pending.get(token)
            if pending is None or pending.scope.user_id != user_id:
                raise InvalidInputError("unknown or expired confirm_token: call forget again without it for a new "
                                        "preview")
            del self._pending[token]
        return pending

    def _expire(self, now: float) -> None:
        for token in [t for t, p in self._pending.items() if p.expires_at <= now]:
            del self._pending[token]
