"""Human renderings (rich) and JSON shapes of what the commands return."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from neusym.cli._base import jsonable

if TYPE_CHECKING:  # the record models (pydantic) load when a command runs, not for --help
    from neusym.record import MemoryRecord, SearchResult

__all__ = ["kv_table", "print_records", "print_results", "record_json", "result_json", "when"]

_STATUS_STYLE = {"active": "green", "pending": "yellow", "superseded": "dim", "archived": "dim",
                 "quarantined": "bold red", "deleted": "dim"}


def when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value is not None else ""


def record_json(rec: MemoryRecord) -> dict[str, Any]:
    """Every field of a memory except the store-local ``nid``/``seq``."""
    data: dict[str, Any] = jsonable(rec.model_dump(mode="json", exclude={"nid", "seq"}))
    return data


def result_json(res: SearchResult, explain: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"id": res.id, "score": round(float(res.score), 6), "memory": record_json(res.memory)}
    if explain:
        out["explanation"] = jsonable(res.explanation.model_dump(mode="json"))
    elif res.explanation.warnings:
        out["warnings"] = list(res.explanation.warnings)
    return out


def _status(rec: MemoryRecord) -> str:
    s = rec.status.value
    return f"[{_STATUS_STYLE.get(s, '')}]{s}[/]" if _STATUS_STYLE.get(s) else s


def print_records(console: Console, records: Sequence[MemoryRecord], *, title: str | None = None) -> None:
    if not records:
        console.print("[dim](no memories)[/]")
        return
    table = Table(title=title, show_lines=False, header_style="bold", expand=False)
    table.add_column("id", no_wrap=True, style="cyan")
    table.add_column("type", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("valid from", no_wrap=True)
    table.add_column("valid to", no_wrap=True)
    table.add_column("content", overflow="fold")
    for r in records:
        table.add_row(r.id, r.type.value, _status(r), when(r.valid_from or r.created_at), when(r.valid_to),
                      escape(r.content))
    console.print(table)


def print_results(console: Console, results: Sequence[SearchResult], *, explain: bool) -> None:
    if not results:
        console.print("[dim](nothing found)[/]")
        return
    for i, r in enumerate(results, 1):
        warn = f"  [red]! {escape('; '.join(r.explanation.warnings))}[/]" if r.explanation.warnings else ""
        console.print(f"[bold]{i:>2}.[/] [green]{r.score:.3f}[/] [magenta]{r.memory.type.value}[/] "
                      f"{escape(r.content)}{warn}")
        console.print(f"     [dim]{r.id}  {_status(r.memory)}  {when(r.memory.valid_from or r.memory.created_at)}[/]")
        if explain:
            e = r.explanation
            parts = [f"via={e.via}", f"similarity={e.similarity:.3f}"]
            for name in ("dense", "lexical", "rerank"):
                v = getattr(e, name)
                if v is not None:
                    parts.append(f"{name}={v:.3f}")
            for name in ("dense_rank", "lexical_rank"):
                v = getattr(e, name)
                if v is not None:
                    parts.append(f"{name}={v}")
            for name in ("recency", "importance", "confidence", "strength", "type_weight", "entity_match",
                         "graph", "neighbour", "temporal"):
                parts.append(f"{name}={getattr(e, name):.3f}")
            console.print("     " + escape("  ".join(parts)))
            if e.path:
                console.print("     path: " + escape(" -> ".join(e.path)))
            if e.weights:
                console.print("     weights: " + escape(", ".join(f"{k}={v:g}" for k, v in e.weights.items())))


def kv_table(console: Console, data: Mapping[str, Any], *, title: str | None = None) -> None:
    table = Table(title=title, show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for k, v in data.items():
        if isinstance(v, Mapping):
            v = ", ".join(f"{a}={b}" for a, b in v.items()) or "-"
        elif isinstance(v, list | tuple):
            v = ", ".join(str(x) for x in v) or "-"
        elif isinstance(v, datetime):
            v = when(v)
        table.add_row(str(k), escape("" if v is None else str(v)))
    console.print(table)
