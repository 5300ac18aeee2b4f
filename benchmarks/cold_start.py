"""Cold start: what a new user waits for, each step in a fresh interpreter.

    nice -n 10 python -m benchmarks.cold_start --runs 5 --baseline /work/main

Every run starts new processes (nothing warm but the OS page cache, which a user's second command has too):

* ``import``: ``import neusym`` (wall of the whole interpreter, and the import itself);
* ``flow``: ``from neusym import NeuSymMemory``, open a NEW embedded store in an empty directory, add one memory,
  search it, close; each step timed inside the process, plus the process's wall time (interpreter start and exit,
  which includes stopping the embedded server). The derived-data cache (``NEUSYM_CACHE_DIR``) is the user's, warm
  after the first run as it is for a user; ``first_ever_*`` repeats the flow with an empty cache;
* ``help``: ``python -m neusym --help`` (wall);
* ``mcp``: spawn ``python -m neusym mcp --user bench`` with the official MCP client over stdio and time until
  ``initialize`` returns, then the first ``remember`` call.

``--code DIR`` picks the source tree measured (default: this checkout); ``--baseline DIR`` measures a second tree
(the last round, e.g. ``/work/main``) in the same session, interleaved run by run so both see the same load. The
report gives medians of ``--runs`` runs, the baseline's medians and their ratio, and the load average. Benchmarks
measure; nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["main", "measure_tree"]

_FLOW = r"""
import json, sys, time
t0 = time.perf_counter()
from neusym import NeuSymMemory
t1 = time.perf_counter()
mem = NeuSymMemory(sys.argv[1])
t2 = time.perf_counter()
mem.add("I play the cello on Sundays", user_id="bench")
t3 = time.perf_counter()
hits = mem.search("what instrument do I play?", user_id="bench", k=3)
t4 = time.perf_counter()
mem.close()
t5 = time.perf_counter()
assert hits and "cello" in hits[0].content, hits
print(json.dumps({"import": t1 - t0, "open": t2 - t1, "first_add": t3 - t2, "first_search": t4 - t3,
                  "close": t5 - t4}))
"""

_IMPORT = r"""
import json, time
t0 = time.perf_counter()
import neusym
print(json.dumps({"import_in_process": time.perf_counter() - t0}))
"""

_MCP = r"""
import asyncio, json, os, sys, time
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "neusym", "mcp", "--user", "bench", "--data-dir", sys.argv[1]],
                                   env=dict(os.environ))
    t0 = time.perf_counter()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            t1 = time.perf_counter()
            result = await session.call_tool("remember", {"content": "I play the cello on Sundays"})
            t2 = time.perf_counter()
            assert not result.isError, result
    t3 = time.perf_counter()
    print(json.dumps({"mcp_initialize": t1 - t0, "mcp_first_remember": t2 - t1, "mcp_shutdown": t3 - t2}))

asyncio.run(main())
"""


def _env(code: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NEO4J_", "FALKORDB_", "NEUSYM_"))}  # the embedded default, as a new user has it
    env["PYTHONPATH"] = str(code)
    env["PYTHONDONTWRITEBYTECODE"] = "0"
    return env


def _run(code: Path, args: list[str], *, timeout: float = 300.0,
         extra_env: dict[str, str] | None = None) -> tuple[float, dict[str, float]]:
    """Wall time of one fresh interpreter and the JSON timings it printed last (if any)."""
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], cwd=str(code), env={**_env(code), **(extra_env or {})},
                          capture_output=True, text=True, timeout=timeout, check=False)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{args[:3]} on {code} failed (rc {proc.returncode}):\n{proc.stderr[-3000:]}")
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    return wall, (json.loads(lines[-1]) if lines else {})


def _one_run(code: Path) -> dict[str, float]:
    row: dict[str, float] = {}
    wall, inner = _run(code, ["-c", _IMPORT])
    row["import_wall"] = wall
    row.update(inner)
    with tempfile.TemporaryDirectory(prefix="neusym-cold-") as tmp:
        wall, inner = _run(code, ["-c", _FLOW, tmp])
        row["flow_wall"] = wall
        row.update({f"flow_{k}": v for k, v in inner.items()})
    with tempfile.TemporaryDirectory(prefix="neusym-cold-") as tmp:  # a first run ever: empty derived-data cache
        wall, inner = _run(code, ["-c", _FLOW, f"{tmp}/data"], extra_env={"NEUSYM_CACHE_DIR": f"{tmp}/cache"})
        row["first_ever_flow_wall"] = wall
        row["first_ever_first_add"] = inner["first_add"]
    wall, _ = _run(code, ["-m", "neusym", "--help"])
    row["help_wall"] = wall
    with tempfile.TemporaryDirectory(prefix="neusym-cold-") as tmp:
        wall, inner = _run(code, ["-c", _MCP, tmp])
        row["mcp_wall"] = wall
        row.update(inner)
    return row


def measure_tree(codes: dict[str, Path], runs: int) -> dict[str, list[dict[str, float]]]:
    """``runs`` rounds; in each round every tree is measured once (interleaved, so they share the load)."""
    out: dict[str, list[dict[str, float]]] = {name: [] for name in codes}
    for i in range(runs):
        for name, code in codes.items():
            row = _one_run(code)
            out[name].append(row)
            print(f"run {i + 1}/{runs} {name}: " + ", ".join(f"{k} {v:.2f}" for k, v in row.items()),
                  file=sys.stderr, flush=True)
    return out


def _medians(rows: list[dict[str, float]]) -> dict[str, float]:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    return {k: statistics.median(r[k] for r in rows if k in r) for k in keys}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.cold_start", description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--code", type=Path, default=Path(__file__).resolve().parent.parent)
    p.add_argument("--baseline", type=Path, default=None, help="another source tree, e.g. /work/main")
    p.add_argument("--out", type=Path, default=None, help="write the JSON report here")
    a = p.parse_args(argv)
    codes = {"this": a.code.resolve()}
    if a.baseline is not None:
        codes["baseline"] = a.baseline.resolve()
    load_before = os.getloadavg()
    rows = measure_tree(codes, a.runs)
    load_after = os.getloadavg()
    med = {name: _medians(r) for name, r in rows.items()}
    report: dict[str, Any] = {"runs": a.runs, "trees": {k: str(v) for k, v in codes.items()},
                              "load_before": load_before, "load_after": load_after, "medians": med, "rows": rows}
    keys = list(med["this"])
    print(f"cold start, medians of {a.runs} fresh-process runs (s); load {load_before[0]:.1f} -> "
          f"{load_after[0]:.1f}")
    head = f"{'step':28s} {'this':>8s}" + (f" {'baseline':>9s} {'ratio':>6s}" if "baseline" in med else "")
    print(head)
    for k in keys:
        line = f"{k:28s} {med['this'][k]:8.3f}"
        if "baseline" in med and k in med["baseline"]:
            b = med["baseline"][k]
            line += f" {b:9.3f} {med['this'][k] / b if b else float('nan'):6.2f}"
        print(line)
    if a.out is not None:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
