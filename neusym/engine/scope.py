"""The tenant rule, in one place: every tenant-scoped call resolves its scope here.

``user_id`` is the tenant boundary. A call names its tenant (``user_id``), or the memory was opened for one user
(``default_user_id``, an explicit opt-in for single-user applications), or an operator says ``all_tenants=True``
on an admin path. Anything else (only an agent or a session, nothing at all) is a :class:`ScopeError`: an
``agent_id``/``session_id`` alone would match every tenant's memories with that agent or session name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from neusym.errors import InvalidInputError, ScopeError
from neusym.record import Scope, validate_label

__all__ = ["resolve_scope"]


def resolve_scope(
    scope: Scope | Mapping[str, Any] | None = None,
    *,
    default_user_id: str | None = None,
    all_tenants: bool = False,
    what: str = "this call",
    admin: bool = False,
    **ids: str | None,
) -> Scope:
    """The scope a call works in: explicit ``ids`` win over ``scope``; a missing ``user_id`` is the configured
    ``default_user_id``; without either, a :class:`ScopeError` (unless ``all_tenants``, where an unset field is a
    wildcard across tenants).

    ``admin`` only words the error: the path also accepts ``all_tenants=True``.
    Idempotent: a resolved scope resolves to itself, so a service may resolve again what the facade resolved.
    """
    if not isinstance(all_tenants, bool):
        raise ScopeError(f"all_tenants must be True or False, got {all_tenants!r}")
    sc = Scope.coerce(dict(scope) if isinstance(scope, Mapping) else scope, **ids)
    for key, value in sc.as_params().items():  # shown and logged as they are: one printable line each
        if value is not None:
            try:
                validate_label(value, key)
            except InvalidInputError as err:
                raise ScopeError(str(err)) from err
    if all_tenants or sc.user_id is not None:
        return sc
    if default_user_id is not None:
        return Scope(user_id=default_user_id, agent_id=sc.agent_id, session_id=sc.session_id)
    given = ", ".join(f"{k}={v!r}" for k, v in sc.as_params().items() if v is not None)
    raise ScopeError(
        f"{what} needs a user_id (the tenant boundary)" + (f"; got only {given}" if given else "")
        + ": pass user_id=..., or open the memory with default_user_id=... (a single-user application)"
        + (", or all_tenants=True (operators)" if admin else "")
    )
