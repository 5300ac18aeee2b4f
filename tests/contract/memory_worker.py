"""A second application process for the multi-process tests: one NeuSymMemory driven by JSON lines on stdin.

Usage: ``python memory_worker.py '<NeuSymConfig JSON>'``; prints ``{"ready": true}``, then answers each request line
with one JSON line. Requests: ``{"op": "add", "text", "user_id"}`` -> ``{"id"}``;
``{"op": "turn", "text", "user_id", "session_id", "speaker"}`` -> ``{"id"}``; ``{"op": "search", "query",
"user_id", "k", "recipe"}`` -> ``{"ids", "contents"}``; ``{"op": "delete", "id", "user_id"}`` -> ``{"deleted"}``;
``{"op": "state"}`` -> ``{"watermark", "nids"}`` (the nids in this process's catalog). EOF closes the memory.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def main() -> None:
    from neusym import NeuSymConfig, NeuSymMemory
    from neusym.embeddings import HashingEmbedder

    cfg = NeuSymConfig.model_validate_json(sys.argv[1])
    mem = NeuSymMemory(config=cfg, embedder=HashingEmbedder(256))

    def reply(data: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(data) + "\n")
        sys.stdout.flush()

    reply({"ready": True, "neural_backend": cfg.neural_backend})
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            req = json.loads(line)
            try:
                op = req["op"]
                if op == "add":
                    reply({"id": mem.add(req["text"], user_id=req["user_id"], infer=False)[0].id})
                elif op == "turn":  # one conversation turn of a session (chained NEXT to the session's last)
                    rec = mem.add(req["text"], user_id=req["user_id"], session_id=req["session_id"],
                                  speaker=req["speaker"], infer=False)[0]
                    reply({"id": rec.id})
                elif op == "search":
                    hits = mem.search(req["query"], user_id=req["user_id"], k=req.get("k", 5),
                                      recipe=req.get("recipe"))
                    reply({"ids": [h.id for h in hits], "contents": [h.content for h in hits]})
                elif op == "delete":
                    reply({"deleted": mem.delete(req["id"], user_id=req["user_id"])})
                elif op == "state":
                    reply({"watermark": mem.derived.watermark, "nids": sorted(mem.derived.catalog.pos_of)})
                else:
                    reply({"error": f"unknown op {op!r}"})
            except Exception as err:  # noqa: BLE001 - reported to the test, which fails on it
                reply({"error": f"{type(err).__name__}: {err}"})
    finally:
        mem.close()


if __name__ == "__main__":
    main()
