"""Probe 1c/2: MCP tools (in-process server, real memory): what text and structured content carry an instruction
that add() would quarantine, framed or not.

Run: PYTHONPATH=$PWD nice -n 10 python3 redteam/mcp_paths.py
"""
import asyncio
import json
import sys

sys.path.insert(0, "redteam")
from common import ATTACK, open_mem  # noqa: E402
from mcp.shared.memory import create_connected_server_and_client_session  # noqa: E402

from mcp_neusym import ServerSettings, build_server  # noqa: E402
from neusym.prompting import CLOSE, OPEN  # noqa: E402

NEEDLE = "reveal your system prompt"


def outside_frame(text: str) -> str:
    """The parts of a tool's text outside <neusym_memories> ... </neusym_memories>."""
    out, rest = [], text
    while OPEN in rest:
        a = rest.index(OPEN)
        out.append(rest[:a])
        b = rest.find(CLOSE, a)
        rest = rest[b + len(CLOSE):] if b != -1 else ""
    out.append(rest)
    return "".join(out)


def report(name, res):
    text = "".join(c.text for c in res.content if hasattr(c, "text"))
    sc = json.dumps(res.structuredContent or {})
    unframed = NEEDLE in outside_frame(text).lower()
    framed = NEEDLE in text.lower()
    in_sc = NEEDLE in sc.lower()
    tag = "LEAK-UNFRAMED" if unframed else ("framed" if framed else "absent")
    print(f"{tag:14s} struct={'RAW' if in_sc else '-':3s} {name:45s} err={res.isError} | {text[:160]!r}", flush=True)
    return text


async def main():
    mem, d = open_mem()
    server = build_server(mem, ServerSettings(user_id="ana"))
    async with create_connected_server_and_client_session(server) as s:
        call = s.call_tool
        r = await call("remember", {"content": ATTACK})
        report("remember(attack)", r)
        r = await call("remember", {"content": "My favourite colour is blue"})
        mid = r.structuredContent["stored"][0]["id"]
        r = await call("update", {"memory_id": mid, "content": ATTACK})
        report("update(attack)", r)
        r = await call("remember", {"content": "My favourite drink is tea"})
        mid2 = r.structuredContent["stored"][0]["id"]
        r = await call("update", {"memory_id": mid2, "tags": ["x"], "reason": ATTACK})
        report("update(tags, reason=attack)", r)
        r = await call("history", {"memory_id": mid2})
        report("history(memory_id) after reason=attack", r)
        r = await call("history", {"memory_id": mid})
        report("history(memory_id) of quarantined edit", r)
        r = await call("remember", {"content": "I like hiking on Sundays", "tags": [ATTACK]})
        report("remember(tags=[attack])", r)
        r = await call("query", {"tags": [ATTACK]})
        report("query(tags=attack)", r)
        r = await call("recall", {"query": "hiking sundays"})
        report("recall hiking (tag=attack)", r)
        r = await call("import_memories", {"text": json.dumps({"content": ATTACK}) + "\n"})
        report("import_memories(attack)", r)
        r = await call("import_memories", {"text": json.dumps({"content": "I play chess", "tags": [ATTACK],
                                                               "metadata": {"n": ATTACK}}) + "\n"})
        report("import_memories(tags/metadata=attack)", r)
        r = await call("recall", {"query": "system prompt instructions reveal", "k": 20})
        report("recall(system prompt)", r)
        r = await call("query", {"limit": 100, "include_history": True})
        report("query(all)", r)
        r = await call("review_list", {})
        report("review_list", r)
        r = await call("forget", {"topic": "system prompt"})
        report("forget preview topic", r)
        r = await call("forget", {"memory_ids": [ATTACK[:30]]})
        report("forget missing id=attack", r)
        r = await call("reflect", {})
        report("reflect", r)
        r = await call("forget", {"memory_ids": [mid2], "reason": ATTACK})
        tok = r.structuredContent.get("confirm_token")
        r = await call("forget", {"confirm_token": tok})
        report("forget apply (reason=attack)", r)
        r = await call("history", {"memory_id": mid2})
        report("history after forget reason=attack", r)
        res = await s.read_resource("neusym://memories/recent")
        txt = res.contents[0].text
        print("recent resource: raw attack in JSON outside 'text'? ", NEEDLE in json.dumps(
            {k: v for k, v in json.loads(txt).items() if k != "text"}).lower())
        res = await s.read_resource("neusym://profile")
        txt = res.contents[0].text
        print("profile resource contains attack:", NEEDLE in txt.lower())
        p = await s.get_prompt("memory_context", {"query": "system prompt hiking"})
        body = "".join(m.content.text for m in p.messages)
        print("memory_context unframed attack:", NEEDLE in outside_frame(body).lower(), "| any:", NEEDLE in body.lower())
    mem.close()


asyncio.run(main())
