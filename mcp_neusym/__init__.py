"""NeuSym as an MCP server: the memory of any Model Context Protocol client.

A thin adapter on the official ``mcp`` SDK (``pip install "neusym[mcp]"``); the engine never imports it. Start it
with ``neusym mcp --user ana`` (stdio) or ``neusym mcp --http 127.0.0.1:8765 --user ana`` (streamable HTTP), or
embed it::

    from mcp_neusym import ServerSettings, build_server
    server = build_server(NeuSymMemory(), ServerSettings(user_id="ana"))   # an mcp.server.fastmcp.FastMCP

Tools: remember, recall, query, forget (preview, then confirm), update, history, review_list/approve/reject,
reflect, curate, import_memories. Resources: ``neusym://profile``, ``neusym://memories/recent``. Prompt:
``memory_context``. The tenant comes from the configuration or the connection, never from a tool argument (see
:mod:`mcp_neusym.tenant`).
"""

from __future__ import annotations

from mcp_neusym.server import INSTRUCTIONS, build_server, http_app, run, serve
from mcp_neusym.settings import (
    DEFAULT_USER_HEADER,
    TOOL_NAMES,
    HttpAddress,
    ServerSettings,
    parse_http_address,
)

__all__ = [
    "DEFAULT_USER_HEADER",
    "INSTRUCTIONS",
    "TOOL_NAMES",
    "HttpAddress",
    "ServerSettings",
    "build_server",
    "http_app",
    "parse_http_address",
    "run",
    "serve",
]
