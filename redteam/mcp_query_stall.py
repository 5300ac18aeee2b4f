"""Probe 3d: MCP recall/forget with a query of role labels: the tool neutralises the whole query for its title
(mcp_neusym.render.flat cuts AFTER neutralize), which is quadratic in role labels.

Run: PYTHONPATH=$PWD nice -n 10 python3 redteam/mcp_query_stall.py
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
    mem.add("I like green tea", user_id="ana")
    server = build_server(mem, ServerSettings(user_id="ana"))
    async with create_connected_server_and_client_session(server) as s:
        for tool, key in [("recall", "query")]:
            prev = None
            for size in (10_000, 30_000, 100_000):
                q = ("user: " * (size // 6 + 1))[:size]
                t = time.perf_counter()
                r = await s.call_tool(tool, {key: q})
                dt = time.perf_counter() - t
                ratio = f"{dt / prev:5.1f}x" if prev else ""
                print(f"mcp {tool} {size:7d} chars: {dt:7.2f}s {ratio} err={r.isError}", flush=True)
                prev = dt
        t = time.perf_counter()
        mem.search(("user: " * 50_001)[:300_000], user_id="ana", k=5)
        print(f"(library search of the same 300k query: {time.perf_counter() - t:.2f}s)")
    mem.close()


asyncio.run(main())
