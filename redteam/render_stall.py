"""Probe 3c: one stored memory of role labels (neutralize is quadratic in them) stalls every reader that renders it.

Run: PYTHONPATH=$PWD nice -n 10 python3 redteam/render_stall.py [size_bytes]   (default 200000)
"""
import asyncio
import sys
import time

sys.path.insert(0, "redteam")
from common import open_mem  # noqa: E402
from mcp.shared.memory import create_connected_server_and_client_session  # noqa: E402

from mcp_neusym import ServerSettings, build_server  # noqa: E402
from neusym.adapter_support import build_context  # noqa: E402
from neusym.record import Scope  # noqa: E402

size = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
mem, _ = open_mem()
texts = {
    "transcript": ("Transcript of my support chat. " + "User: is it fixed? Assistant: yes, agreed. " * (size // 43))[:size],
    "role-user": ("user: hi " * (size // 9))[:size],
}
for name, text in [(k, v) for k, v in texts.items() if len(sys.argv) < 3 or k in sys.argv[2].split(",")]:
    user = f"u-{name}"
    t = time.perf_counter()
    r = mem.add(text, user_id=user, infer=False)
    print(f"{name}: add {time.perf_counter() - t:.2f}s -> {[x.status.value for x in r] or [d.action.value for d in r.decisions]}", flush=True)
    t = time.perf_counter()
    ctx = build_context(mem, "agreed hi", Scope(user_id=user), max_tokens=500, k=5)
    print(f"   build_context {time.perf_counter() - t:.2f}s ({len(ctx)} chars)", flush=True)

    async def mcp(user=user):
        server = build_server(mem, ServerSettings(user_id=user))
        async with create_connected_server_and_client_session(server) as s:
            for tool, args in [("recall", {"query": "agreed hi"}), ("query", {}), ("review_list", {})]:
                t = time.perf_counter()
                await s.call_tool(tool, args)
                print(f"   mcp {tool} {time.perf_counter() - t:.2f}s", flush=True)

    asyncio.run(mcp())
mem.close()
