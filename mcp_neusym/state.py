"""What every tool, resource and prompt of one server shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mcp_neusym.confirm import Confirmations
from mcp_neusym.settings import ServerSettings
from mcp_neusym.tenant import TenantResolver

if TYPE_CHECKING:
    from neusym.facade import NeuSymMemory

__all__ = ["ServerState"]


@dataclass
class ServerState:
    memory: NeuSymMemory
    settings: ServerSettings
    tenant: TenantResolver = field(init=False)
    confirmations: Confirmations = field(init=False)

    def __post_init__(self) -> None:
        self.tenant = TenantResolver(self.memory, self.settings)
        self.confirmations = Confirmations(self.settings.confirm_ttl_s)
