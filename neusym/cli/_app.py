"""The typer application objects (commands register themselves on these)."""

from __future__ import annotations

import typer

__all__ = ["app", "review_app"]

_EPILOG = (
    "Connection: the embedded graph in --data-dir by default; NEUSYM_BACKEND / NEO4J_URI, NEO4J_USERNAME, "
    "NEO4J_PASSWORD, NEO4J_DATABASE / FALKORDB_HOST select a server, exactly like the library. "
    "Exit codes: 0 ok, 1 error, 2 invalid input or usage, 3 not found, 4 backend unavailable."
)

app = typer.Typer(
    name="neusym",
    help="Look inside an agent's memory, fix it, back it up and see it: NeuSym from the shell.",
    epilog=_EPILOG,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
)

review_app = typer.Typer(
    help="The review queue: quarantined, conflicting, duplicate, contradicting and suspicious memories.",
    no_args_is_help=True,
)
app.add_typer(review_app, name="review")


def _version(value: bool) -> None:
    if value:
        from neusym._version import __version__

        typer.echo(f"neusym {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the NeuSym version and exit."),
) -> None:
    """Look inside an agent's memory, fix it, back it up and see it: NeuSym from the shell."""
