"""Runs the governance cases against a fresh data directory, through the public API, and writes the report.

One ``NeuSymMemory`` serves every case; each case uses its own ``user_id`` (two for updates: the second one checks
point-in-time reads and rollback). Hard-forget cases run last because they close and reopen the memory.
A case that raises is scored as a failure on every metric it could have passed, and the error is kept.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._common import machine_info, quiet_logs
from benchmarks.governance import cases as case_files
from benchmarks.governance import contradictions, forgetting, poisoning, probes, traces, ttl, updates
from benchmarks.governance.harness import Harness
from benchmarks.governance.report import aggregate, applicable, markdown

SCENARIOS: dict[str, Callable[[Harness, dict[str, Any]], dict[str, Any]]] = {
    "update": updates.run,
    "contradiction": contradictions.run,
    "ttl": ttl.run,
    "forget": forgetting.run,
    "poisoning": poisoning.run,
}
_FACET_KEYS = ("id", "split", "category", "label", "lang", "origin", "subject", "attribute", "kind", "phenomena")


def _facets(case: dict[str, Any]) -> dict[str, Any]:
    return {k: case[k] for k in _FACET_KEYS if k in case}


def _redacted(result: dict[str, Any]) -> dict[str, Any]:
    """A held-out case as the written report shows it: facets, metrics and counts, no text (tuners read reports)."""
    out = {k: v for k, v in result.items() if k in (*_FACET_KEYS, "metrics", "counts", "name")}
    if result.get("error"):
        out["error"] = str(result["error"]).split(":", 1)[0]
    return out


def _crashed(case: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    return {"metrics": {m.key: (False if m.higher_is_better else None) for m in applicable(case)},
            "error": f"{type(exc).__name__}: {exc}"[:500],
            "traceback": traceback.format_exc(limit=4)[-1500:]}


def _open(data_dir: Path, embedder: str, llm: Any) -> Any:
    from neusym import NeuSymMemory

    emb = None
    if embedder == "hashing":
        from neusym.embeddings import HashingEmbedder

        emb = HashingEmbedder(384)
    mem = NeuSymMemory(data_dir, embedder=emb, llm=llm)
    if llm is not None:
        mem.governance.configure(llm_judge=True, llm_arbiter=True, llm=llm)
    return mem


def _run_hard_forget(h: Harness, hard: list[dict[str, Any]], reopen: Callable[[], Any], data_dir: Path,
                     embedder_spec: str, log: Callable[[str], None]) -> tuple[list[dict[str, Any]], Any]:
    states: dict[str, dict[str, Any]] = {}
    results: dict[str, dict[str, Any]] = {}
    for case in hard:
        try:
            state = traces.prepare(h, case)
            hits, errs = traces.api_traces(h, case, state, "open")
            states[case["id"]] = state
            results[case["id"]] = {"traces": hits, "errors": errs, "partial": [], "keep": traces.keep_ok(h, case, state)}
        except Exception as exc:  # noqa: BLE001
            results[case["id"]] = {**_crashed(case, exc), "traces": [], "errors": [], "partial": [], "keep": False}
    secret_owner = {s: c["id"] for c in hard for s in c["secrets"]}
    tag = {s: f"s{i}" for c in hard for i, s in enumerate(c["secrets"])}
    h.mem.close()
    log("hard_forget: closed; scanning files and export")
    notes: dict[str, Any] = {}

    def file_pass(phase: str) -> None:
        full, part = traces.scan_files(data_dir, secret_owner)
        for s, where in full.items():
            results[secret_owner[s]]["traces"] += [f"{tag[s]} {phase}:file {w}" for w in where]
        for s, where in part.items():
            results[secret_owner[s]]["partial"] += [f"{tag[s]} {phase}:file {w}" for w in where]

    file_pass("closed")
    exported, notes["export"] = traces.export_traces(data_dir, embedder_spec, secret_owner)
    for s, where in exported.items():
        results[secret_owner[s]]["traces"] += [f"{tag[s]} {w}" for w in where]
    h.mem = reopen()
    for case in hard:
        if case["id"] in states:
            hits, errs = traces.api_traces(h, case, states[case["id"]], "reopened")
            results[case["id"]]["traces"] += hits
            results[case["id"]]["errors"] += errs
    for s, where in traces.cypher_traces(h, secret_owner).items():
        for w in where:
            results[secret_owner[s]]["errors" if "error" in w else "traces"].append(f"{tag[s]} reopened:{w}")
    h.mem.close()
    file_pass("reopened+closed")
    h.mem = reopen()
    for case in hard:
        if case["id"] in states:
            hits, errs = traces.api_traces(h, case, states[case["id"]], "reopened", with_secret_queries=True)
            results[case["id"]]["traces"] += hits
            results[case["id"]]["errors"] += errs
    h.mem.close()
    out = []
    for case in hard:
        r = results[case["id"]]
        tr = sorted(set(r["traces"]))
        out.append({**_facets(case), "name": case.get("name"), "error": r.get("error"),
                    "metrics": {"hard_forget_clean": not tr and not r.get("error"), "hard_forget_keep": r["keep"]},
                    "counts": {"hard_forget_traces": len({traces.place(e) for e in tr}),
                               "hard_forget_partial": len({traces.place(e) for e in r["partial"]})},
                    "detail": {"traces": tr, "partial": sorted(set(r["partial"])), "api_errors": sorted(set(r["errors"])),
                               "forget_report": states.get(case["id"], {}).get("forget_report")}})
    notes["export_status"] = notes.pop("export")
    return out, notes


def run(split: str = "test", *, llm: str = "none", out_dir: Path | None = None, embedder: str = "minilm",
        categories: list[str] | None = None, limit_per_category: int | None = None, keep_data: bool = False,
        progress: bool = True, test_details: bool = False) -> dict[str, Any]:
    """Run the suite; returns the report (also written as JSON + markdown to ``out_dir`` when given).

    The written JSON keeps per-case texts (top hits, decisions) for train cases only; held-out cases show their
    metrics without text unless ``test_details`` (for whoever owns the test split, never for tuning)."""
    quiet_logs()
    log: Callable[[str], None] = (lambda msg: print(msg, file=sys.stderr, flush=True)) if progress else (lambda m: None)
    splits = ["train", "test"] if split == "both" else [split]
    cases = case_files.load(splits, categories=categories, limit_per_category=limit_per_category)
    scripted = None
    if llm == "scripted":
        from benchmarks.governance.llm import ScriptedChatModel

        scripted = ScriptedChatModel()
    elif llm != "none":
        raise ValueError(f"unknown --llm {llm!r} (none | scripted)")
    data_dir = Path(tempfile.mkdtemp(prefix="neusym-govbench-"))
    t_start = time.perf_counter()
    results: list[dict[str, Any]] = []
    notes: dict[str, Any] = {"data_dir": str(data_dir)}
    mem = _open(data_dir, embedder, scripted)
    h = Harness(mem)
    try:
        for cat in ("update", "contradiction", "ttl", "forget", "poisoning"):
            todo = [c for c in cases if c["category"] == cat]
            t0 = time.perf_counter()
            for case in todo:
                try:
                    r = SCENARIOS[cat](h, case)
                except Exception as exc:  # noqa: BLE001 - a crash is a measured failure, not an abort
                    r = _crashed(case, exc)
                results.append({**_facets(case), **r})
            if todo:
                log(f"{cat}: {len(todo)} cases in {time.perf_counter() - t0:.0f} s")
        api_probes = probes.run(h) if not categories or len(categories) > 1 else []
        hard = [c for c in cases if c["category"] == "hard_forget"]
        if hard:
            t0 = time.perf_counter()
            hard_results, hard_notes = _run_hard_forget(
                h, hard, lambda: _open(data_dir, embedder, scripted), data_dir,
                "minilm" if embedder == "minilm" else "hashing:384", log)
            results += hard_results
            notes.update(hard_notes)
            log(f"hard_forget: {len(hard)} cases in {time.perf_counter() - t0:.0f} s")
    finally:
        with contextlib.suppress(Exception):  # already closed by the hard-forget pass
            h.mem.close()
        if not keep_data:
            shutil.rmtree(data_dir, ignore_errors=True)
    info = machine_info("benchmarks.governance")
    meta = {**info, "split": split, "llm": llm, "embedder": embedder, "cases": len(cases),
            "seconds": round(time.perf_counter() - t_start, 1),
            "llm_calls": scripted.call_count if scripted is not None else None, "notes": notes}
    report: dict[str, Any] = {"meta": meta, "aggregate": aggregate(results), "api_probes": api_probes,
                              "hard_forget_detail": [{"id": r["id"], "name": r.get("name"),
                                                      "traces": r["detail"]["traces"],
                                                      "partial": r["detail"]["partial"]}
                                                     for r in results if r["category"] == "hard_forget"],
                              "cases": results}
    if out_dir is not None:
        stem = f"governance_{split}" + ("" if llm == "none" else f"_llm-{llm}") + (
            "" if embedder == "minilm" else f"_{embedder}")
        written = {**report, "cases": [r if test_details or r["split"] != "test" else _redacted(r)
                                        for r in results]}
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f"{stem}.json").write_text(json.dumps(written, default=str, separators=(",", ":")) + "\n",
                                              encoding="utf-8")
        (out_dir / f"{stem}.md").write_text(markdown(report), encoding="utf-8")
        log(f"wrote {out_dir / stem}.json and .md")
    return report
