"""Probe 5b/9: guarded Cypher: the row cap does not bound what one row holds (collect/range/string building), and
what the guard lets through. Run: PYTHONPATH=$PWD nice -n 10 python3 redteam/cypher_cap.py
"""
import resource
import sys
import time

sys.path.insert(0, "redteam")
from common import open_mem  # noqa: E402

mem, _ = open_mem()
mem.add("I like tea", user_id="a")
for stmt in ["UNWIND range(1, 3000000) AS x RETURN x",
             "UNWIND range(1, 3000000) AS x RETURN collect(x) AS c",
             "RETURN range(1, 3000000) AS r",
             "UNWIND range(1, 3000000) AS x WITH collect(toString(x)) AS c RETURN c",
             "CALL db.labels() YIELD label RETURN label",
             "MATCH (m:Memory) SET m.content = 'x' RETURN m",
             "MATCH (m:Memory) RETURN m.content AS c UNION MATCH (a:Audit) RETURN a.reason AS c",
             "CALL { MATCH (m:Memory) RETURN m } RETURN m.content AS c",
             "MATCH (m:Memory) WITH m CALL { WITH m SET m.x = 1 } RETURN m",
             "MATCH (m:Memory) FOREACH (x IN [1] | SET m.y = 1) RETURN m",
             "LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",
             "CALL db.idx.fulltext.queryNodes('Memory', 'tea') YIELD node RETURN node.content",
             "MATCH (m:Memory) RETURN m.content AS c // ; MATCH (n) DETACH DELETE n"]:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.perf_counter()
    try:
        rows = mem.admin.cypher(stmt, all_tenants=True, limit=10)
        size = len(str(rows))
        res = f"{len(rows)} rows, {size} chars"
    except Exception as e:  # noqa: BLE001
        res = f"{type(e).__name__}: {str(e)[:90]}"
    grow = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(f"{time.perf_counter() - t:6.2f}s +{grow:6.0f} MB  {stmt[:70]:70s} -> {res}")
print("memory content now:", [r.content for r in mem.query(user_id="a")])
mem.close()
