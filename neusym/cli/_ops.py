"""Operator commands: curate, reflect, review, rollback, stats, export, restore, graph, cypher, reindex, demo."""

from __future__ import annotations

import json
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from neusym.cli._app import app, review_app
from neusym.cli._base import Opts, command, emit, err_console, jsonable, parse_time, progress_bar
from neusym.cli._render import kv_table, print_records, record_json
from neusym.errors import InvalidInputError
from neusym.private_files import write_private

if TYPE_CHECKING:
    from neusym.record import MemoryRecord

__all__: list[str] = []


# ---------------------------------------------------------------------------------------------------- curate
@command(app, "curate", tenants=True)
def curate_cmd(
    opts: Opts,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="Report what would change.")] = False,
    now: Annotated[str | None, typer.Option(help="Simulated clock (ISO-8601, epoch, +30d).")] = None,
    every: Annotated[float | None, typer.Option("--every", min=0.001, metavar="SECONDS", help="Keep running: one "
                                                "pass per interval until SIGTERM/Ctrl-C (cron/systemd "
                                                "without a timer; --json prints one line per pass).")] = None,
) -> None:
    """Run the janitor: expire TTLs, decay, archive faded memories, purge old archives (once, or --every N s)."""
    opts.check_scope()
    stop = threading.Event()
    if every is not None:
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with opts.memory() as mem:
        sc = opts.scope(mem)
        while True:
            report = mem.run_janitor(scope=None if opts.all_tenants else sc, all_tenants=opts.all_tenants,
                                     now=parse_time(now, "--now") if now else None, dry_run=dry_run)
            _janitor_report(opts, report, dry_run, one_line=every is not None)
            if every is None or stop.wait(every):
                return


def _janitor_report(opts: Opts, report: Any, dry_run: bool, *, one_line: bool) -> None:
    data = jsonable(report.model_dump(mode="json"))

    def human(c: Console) -> None:
        verb = "would" if dry_run else "did"
        c.print(f"janitor ({verb}): expired {len(report.expired)}, decayed {report.decayed}, archived "
                f"{len(report.archived)}, purged {len(report.purged)}, compacted {report.compacted}")

    if one_line and opts.json:
        sys.stdout.write(json.dumps(data, separators=(",", ":")) + "\n")
        sys.stdout.flush()
        return
    emit(opts, data, human)


# ---------------------------------------------------------------------------------------------------- reflect
@command(app, "reflect")
def reflect_cmd(
    opts: Opts,
    memory_id: Annotated[list[str] | None, typer.Option("--id", help="Reflect on these memories (repeat).")]
    = None,
    entity: Annotated[str | None, typer.Option(help="Reflect on one entity's neighbourhood.")] = None,
    goal: Annotated[str | None, typer.Option(help="What the reflection should focus on.")] = None,
    cool: Annotated[str, typer.Option(help="What happens to covered observations: demote, archive, none.")]
    = "demote",
    only_unreflected: Annotated[bool, typer.Option("--only-unreflected", help="Skip memories a reflection "
                                                   "already covers.")] = False,
    session_end: Annotated[bool, typer.Option("--session-end", help="End the --session: reflect it now.")]
    = False,
) -> None:
    """Consolidate memories into a reflection linked DERIVED_FROM its sources (LLM-free extractive reflector)."""
    with opts.memory() as mem:
        if session_end:
            if not opts.session:
                raise InvalidInputError("--session-end needs --session")
            out = mem.session_end(session_id=opts.session, user_id=opts.user, agent_id=opts.agent, wait=True)
            if out is None:
                raise InvalidInputError(f"session {opts.session!r} has nothing to reflect")
        else:
            out = mem.reflect(scope=opts.scope(mem), ids=memory_id, entity=entity, goal=goal, cool=cool,
                              only_unreflected=only_unreflected)
    data = out.as_dict()

    def human(c: Console) -> None:
        state = "[green]stored[/]" if out.stored else "[yellow]not stored[/]"
        c.print(f"reflection {state} {out.id or ''}")
        c.print(escape(out.summary))
        c.print(f"[dim]{len(out.source_ids)} sources, {len(out.reinforced)} reinforced, {len(out.cooled)} "
                "cooled[/]")

    emit(opts, data, human)


# ---------------------------------------------------------------------------------------------------- review
@command(review_app, "list", tenants=True)
def review_list_cmd(
    opts: Opts,
    kind: Annotated[str | None, typer.Option(help="quarantine, conflict, dedup, contradiction or suspicious.")]
    = None,
    limit: Annotated[int, typer.Option(min=1, max=10000)] = 100,
) -> None:
    """Items waiting for a decision."""
    with opts.memory() as mem:
        items = mem.review_queue(kind, scope=opts.scope(mem), limit=limit, all_tenants=opts.all_tenants)
    data = {"count": len(items), "items": [{"memory_id": i.memory_id, "kind": i.kind, "reason": i.reason,
                                            "related": i.related, "memory": record_json(i.record)} for i in items]}

    def human(c: Console) -> None:
        if not items:
            c.print("[dim](the review queue is empty)[/]")
            return
        table = Table(header_style="bold")
        for col in ("id", "kind", "status", "content", "why", "related"):
            table.add_column(col, overflow="fold", no_wrap=col in ("id", "kind"))
        for i in items:
            table.add_row(i.memory_id, i.kind, i.record.status.value, escape(i.record.content), escape(i.reason),
                          ", ".join(i.related))
        c.print(table)

    emit(opts, data, human)


def _review_decide(opts: Opts, memory_id: str, reason: str, approve: bool) -> None:
    with opts.memory() as mem:
        rec: MemoryRecord | None
        if approve:
            rec = mem.review_approve(memory_id, scope=opts.scope(mem), actor="cli", reason=reason)
        else:
            rec = mem.review_reject(memory_id, scope=opts.scope(mem), actor="cli", reason=reason)
    verb = "approved" if approve else "rejected"
    data = {"memory_id": memory_id, "decision": verb, "memory": record_json(rec) if rec is not None else None,
            "purged": rec is None}

    def human(c: Console) -> None:
        now = "purged" if rec is None else f"now {rec.status.value}"
        c.print(f"{verb} {memory_id}: {now}")

    emit(opts, data, human)


@command(review_app, "approve")
def review_approve_cmd(
    opts: Opts,
    memory_id: Annotated[str, typer.Argument(help="The memory to approve.")],
    reason: Annotated[str, typer.Option(help="Recorded in the audit trail.")] = "approved",
) -> None:
    """Accept an item: release from quarantine, make a conflicting value current, confirm a merge, or accept a
    contradiction."""
    _review_decide(opts, memory_id, reason, True)


@command(review_app, "reject")
def review_reject_cmd(
    opts: Opts,
    memory_id: Annotated[str, typer.Argument(help="The memory to reject.")],
    reason: Annotated[str, typer.Option(help="Recorded in the audit trail.")] = "rejected",
) -> None:
    """Refuse an item: purge a quarantined one, let the other side of a conflict win, keep a suspected duplicate
    as its own memory, or archive the wrong side of a contradiction."""
    _review_decide(opts, memory_id, reason, False)


# ---------------------------------------------------------------------------------------------------- rollback
@command(app, "rollback")
def rollback_cmd(
    opts: Opts,
    memory_id: Annotated[str, typer.Argument(help="The memory whose last change to undo.")],
    audit_id: Annotated[str | None, typer.Option("--audit-id", help="Undo this audit entry instead (see "
                                                 "`neusym history`).")] = None,
    reason: Annotated[str, typer.Option(help="Recorded in the audit trail.")] = "rollback",
) -> None:
    """Undo the latest (or the given) reversible change: an edit, a supersession, an archive or a soft forget."""
    with opts.memory() as mem:
        rec = mem.rollback(memory_id, audit_id=audit_id, scope=opts.scope(mem), actor="cli", reason=reason)
    emit(opts, {"memory": record_json(rec)}, lambda c: print_records(c, [rec], title="after rollback"))


# ---------------------------------------------------------------------------------------------------- stats
@command(app, "stats", tenants=True)
def stats_cmd(opts: Opts) -> None:
    """Counts by status and type, entities, index state and backend."""
    with opts.memory() as mem:
        sc = opts.scope(mem)
        data = mem.stats(scope=sc, all_tenants=opts.all_tenants)
        data["scope"] = {k: v for k, v in sc.as_params().items() if v} if not opts.all_tenants else "all tenants"
    emit(opts, data, lambda c: kv_table(c, data))


# ---------------------------------------------------------------------------------------------------- export / restore
# The work is the library's (mem.export / mem.restore, neusym.backup); these commands parse options and print.
def _ids(opts: Opts) -> dict[str, Any]:
    return {"all_tenants": True} if opts.all_tenants else dict(opts.ids)


@command(app, "export", tenants=True)
def export_cmd(
    opts: Opts,
    out: Annotated[Path, typer.Argument(help="Output JSONL file (.gz compresses; '-' is stdout).",
                                        allow_dash=True)],
    embeddings: Annotated[bool, typer.Option("--embeddings/--no-embeddings", help="Include the base64 "
                                             "float32 embeddings (restore re-embeds without them).")] = True,
    progress: Annotated[bool, typer.Option("--progress/--no-progress")] = True,
) -> None:
    """Back up a scope (or --all-tenants) exactly: memories, embeddings, entities, facts, edges and audit."""
    opts.check_scope()
    to_stdout = str(out) == "-"
    with opts.memory() as mem, progress_bar(opts, "exporting", enabled=progress and not to_stdout) as bar:
        report = mem.export(sys.stdout if to_stdout else out, embeddings=embeddings, progress=bar, **_ids(opts))
    counts = report.counts
    if to_stdout:  # the data went to stdout: the summary goes to stderr
        err_console().print(f"exported {counts}")
        return

    def human(c: Console) -> None:
        parts = ", ".join(f"{v} {k}" for k, v in counts.items())
        c.print(f"exported {parts} to {escape(str(out))}")

    emit(opts, report.as_dict(), human)


@command(app, "restore", tenants=True)
def restore_cmd(
    opts: Opts,
    file: Annotated[Path, typer.Argument(help="An export written by `neusym export` ('-' reads stdin).",
                                         allow_dash=True)],
    skip_existing: Annotated[bool, typer.Option("--skip-existing", help="Keep memories whose id already exists "
                                                "(default: refuse the file).")] = False,
    reembed: Annotated[bool, typer.Option("--reembed", help="Embed every memory again with the target's "
                                          "embedder (after a model change).")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="Validate the file, write nothing.")] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress")] = True,
) -> None:
    """Write an export back exactly as it was (ids, times, statuses, embeddings, edges, audit), into the given scope
    only. The whole file is validated first; it is restored completely or not at all."""
    opts.check_scope()
    source = sys.stdin if str(file) == "-" else file
    with opts.memory() as mem, progress_bar(opts, "restoring", enabled=progress) as bar:
        report = mem.restore(source, skip_existing=skip_existing, reembed=reembed, dry_run=dry_run, progress=bar,
                             **_ids(opts))
    data = report.as_dict()
    data["file"] = str(file)

    def human(c: Console) -> None:
        verb = "would restore" if dry_run else "restored"
        c.print(f"{verb} " + ", ".join(f"{v} {k}" for k, v in report.counts.items() if v)
                + f" from {escape(str(file))}")
        if report.unknown_fields:
            c.print(f"[yellow]kept properties this version does not know:[/] {', '.join(report.unknown_fields)}")

    emit(opts, data, human)


# ---------------------------------------------------------------------------------------------------- graph
@command(app, "graph", tenants=True)
def graph_cmd(
    opts: Opts,
    html: Annotated[Path | None, typer.Option("--html", help="Write the interactive page (self-contained, "
                                              "works offline).")] = None,
    graphml: Annotated[Path | None, typer.Option("--graphml", help="Write GraphML (Gephi, yEd, NetworkX).")]
    = None,
    mermaid: Annotated[Path | None, typer.Option("--mermaid", help="Write Mermaid flowchart text ('-' is "
                                                 "stdout).", allow_dash=True)] = None,
    png: Annotated[Path | None, typer.Option("--png", help="Screenshot of the page (needs Chromium).")] = None,
    limit: Annotated[int, typer.Option(min=1, help="Draw at most the newest N memories.")] = 500,
    status: Annotated[list[str] | None, typer.Option("--status", help="Only these statuses (repeat; default "
                                                     "all).")] = None,
    title: Annotated[str | None, typer.Option(help="Page title.")] = None,
    size: Annotated[str, typer.Option(help="Screenshot size WIDTHxHEIGHT.")] = "1400x900",
) -> None:
    """Export the scope's graph: memories, entities and relations as HTML, GraphML, Mermaid or PNG."""
    from neusym.symbolic.transfer import collect
    from neusym.visual import build_view, to_graphml, to_html, to_mermaid

    if not any((html, graphml, mermaid, png)):
        raise InvalidInputError("choose at least one of --html, --graphml, --mermaid, --png")
    try:
        width, height = (int(x) for x in size.lower().split("x"))
    except ValueError as err:
        raise InvalidInputError(f"--size must look like 1400x900, got {size!r}") from err
    with opts.memory() as mem:
        sc = opts.scope(mem)
        dump = collect(mem.store, sc, all_tenants=opts.all_tenants, statuses=status, limit=limit)
    scope = sc.as_params() if not opts.all_tenants else {}
    label = ", ".join(f"{k.removesuffix('_id')} {v}" for k, v in scope.items() if v) or "all tenants"
    view = build_view(dump, title=title or f"NeuSym memory graph: {label}", scope=scope)
    written: dict[str, str] = {}

    def write(path: Path, text: str) -> None:  # every memory of the scope: 0600, atomic, never through a link
        write_private(path, text)

    page = to_html(view) if html or png else ""
    if html:
        write(html, page)
        written["html"] = str(html)
    if graphml:
        write(graphml, to_graphml(view))
        written["graphml"] = str(graphml)
    if mermaid:
        text = to_mermaid(view)
        if str(mermaid) == "-":
            sys.stdout.write(text)
        else:
            write(mermaid, text)
        written["mermaid"] = str(mermaid)
    if png:
        from neusym.visual.browser import screenshot

        if html:
            screenshot(html, png, width=width, height=height)
        else:
            with tempfile.TemporaryDirectory(prefix="neusym-graph-") as tmp:
                tmp_page = write_private(Path(tmp) / "graph.html", page)
                screenshot(tmp_page, png, width=width, height=height)
        written["png"] = str(png)
    data = {"written": written, **view.counts()}
    if str(mermaid) == "-":
        err_console().print(f"{data['nodes']} nodes, {data['edges']} edges")
        return

    def human(c: Console) -> None:
        more = " (truncated: raise --limit)" if view.truncated else ""
        c.print(f"{data['memories']} memories, {data['entities']} entities, {data['edges']} edges{more}")
        for kind, path in written.items():
            c.print(f"  {kind}: {escape(path)}")

    emit(opts, data, human)


# ---------------------------------------------------------------------------------------------------- cypher
@command(app, "cypher", scope=False, tenants=True)
def cypher_cmd(
    opts: Opts,
    statement: Annotated[str, typer.Argument(help="A read-only Cypher statement.")],
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="KEY=JSON_VALUE (repeat).")] = None,
    limit: Annotated[int, typer.Option(min=1)] = 1000,
) -> None:
    """Guarded read-only Cypher for operators (not tenant-scoped: needs --all-tenants)."""
    if not opts.all_tenants:
        raise InvalidInputError("raw Cypher reads every tenant; pass --all-tenants to acknowledge")
    params: dict[str, Any] = {}
    for p in param or []:
        key, sep, value = p.partition("=")
        if not sep or not key:
            raise InvalidInputError(f"--param {p!r} must look like key=value")
        try:
            params[key] = json.loads(value)
        except ValueError:
            params[key] = value
    with opts.memory() as mem:
        rows = mem.cypher(statement, params, all_tenants=True, limit=limit)
    rows = [{k: (v[:24] + "...") if k == "embedding" and isinstance(v, str) else v for k, v in r.items()}
            for r in rows]

    def human(c: Console) -> None:
        if not rows:
            c.print("[dim](no rows)[/]")
            return
        table = Table(header_style="bold")
        cols = list(rows[0])
        for col in cols:
            table.add_column(col, overflow="fold")
        for r in rows:
            table.add_row(*(escape(json.dumps(jsonable(r.get(col)), ensure_ascii=False)) for col in cols))
        c.print(table)

    emit(opts, {"count": len(rows), "rows": rows}, human)


# ---------------------------------------------------------------------------------------------------- reindex
@command(app, "reindex", scope=False)
def reindex_cmd(
    opts: Opts,
    reembed: Annotated[bool, typer.Option(
        "--reembed", help="Re-embed every memory from its stored content with --embedder first (after a model "
                          "change; resumes an interrupted run). Otherwise only FAISS/BM25 are rebuilt.")] = False,
) -> None:
    """Rebuild FAISS and BM25 from the graph (the source of truth); with --reembed, re-embed the memories too."""
    if reembed:
        _reembed(opts)
        return
    with opts.memory() as mem:
        n = mem.rebuild_index()
    emit(opts, {"reindexed": n}, lambda c: c.print(f"rebuilt the indexes from the graph: {n} memories"))


def _reembed(opts: Opts) -> None:
    """``reindex --reembed``: a store of another model (or an interrupted re-embed) is converted while opening,
    which would refuse it otherwise; a store already on this model is re-embedded explicitly (e.g. one that mixed
    two runtimes of one model). Either way batch by batch through the graph's write sequence, resumable."""
    with progress_bar(opts, "re-embedding") as tick, opts.memory(reembed=tick) as mem:
        report = mem.last_reembed or mem.reembed(progress=tick)
        indexed = len(mem.derived.faiss)
    out = {"reembedded": report.reembedded, "total": report.total, "indexed": indexed,
           "embedder": report.target.name, "previous": report.source.name if report.source else None,
           "resumed": report.resumed}
    emit(opts, out, lambda c: c.print(f"re-embedded {report.reembedded} memories with {report.target.describe()}"
                                      f"{' (resumed)' if report.resumed else ''}; {indexed} vectors indexed"))


# ---------------------------------------------------------------------------------------------------- demo
@app.command("demo")
def demo_cmd(
    data_dir: Annotated[str | None, typer.Option("--data-dir", help="Demo data directory (default "
                                                 "NEUSYM_DEMO_DIR or ./.neusym-demo).")] = None,
    phase: Annotated[str, typer.Option(help="all, write or verify.")] = "all",
) -> None:
    """Run the multi-session memory demo on the embedded default (no server, no API key)."""
    if phase not in ("all", "write", "verify"):
        raise typer.BadParameter(f"{phase!r} is not one of 'all', 'write', 'verify'", param_hint="--phase")
    from neusym.demo import run_demo

    raise typer.Exit(run_demo(data_dir, phase=phase))
