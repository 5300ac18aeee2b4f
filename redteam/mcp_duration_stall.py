"""Probe 3f: MCP ttl / due_within strings go through neusym.cli._base._DURATION (plain `re`, not the linear
language layer): "<spaces>1<spaces>x" backtracks quadratically.

Run: PYTHONPATH=$PWD nice -n 10 python3 redteam/mcp_duration_stall.py
"""
import asyncio
import sys
import time

sys.path.insert(0, "redteam")
from common import open_mem  # noqa: E402
from mcp.shared.memory import create_connected_server_and_client_session  # noqa: E402

from mcp_neusym import ServerSettings, build_server  # noqa: E402


async def main():
    mem, _ = open_mem()
    server = build_server(mem, ServerSettings(user_id="ana"))
    async with create_connected_server_and_client_session(server) as s:
        for tool, args in [("remember", lambda v: {"content": "I like tea", "ttl": v}),
                           ("query", lambda v: {"due_within": v})]:
            prev = None
            for n in (5_000, 15_000, 45_000):
                value = " " * n + "1 " + " " * n + "x"
                t = time.perf_counter()
                r = await s.call_tool(tool, args(value))
                dt = time.perf_counter() - t
                print(f"mcp {tool:8s} duration arg of {len(value):6d} chars: {dt:7.2f}s"
                      f"{f'  ({dt / prev:.1f}x for 3x input)' if prev else ''} err={r.isError}", flush=True)
                prev = dt
    mem.close()


asyncio.run(main())
