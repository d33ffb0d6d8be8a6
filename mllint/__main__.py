"""The `mllint` command (the console script and `python -m mllint`).

`mllint server` is started by editors, which wait for its answer to `initialize`: it starts the language
server directly, without importing the command line (`mllint.cli` loads the configuration, engine, runner
and reporters, ~80 ms that the server loads in the background once initialized), and answers `initialize`
before it imports pygls (`mllint.lsp_start`). `mllint --version`, which
hooks and editors ask first, is answered before any import. Every other command is the command line's.
"""
import os
import sys

# `python -m mllint` puts the working directory first on the module path, so that a project's own
# `json.py` or `ast.py` would be imported in place of the standard library's; the console script does
# not, and neither does this (set before any other import).
if __name__ == "__main__" and not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from mllint import __version__  # noqa: E402

SERVER_COMMANDS = (["server"], ["server", "--stdio"])
EXIT_ERROR = 2


def run() -> None:
    """mllint's own failures exit 2 with a message, never a bare traceback."""
    try:
        start()
    except Exception as error:  # the last line of defence
        if os.environ.get("MLLINT_DEBUG") or "--verbose" in sys.argv[1:]:
            import traceback

            traceback.print_exc()
        print(f"mllint: internal error: {type(error).__name__}: {error}. Please report it to mllint's developers.", file=sys.stderr)
        sys.exit(EXIT_ERROR)


def start() -> None:
    # Imported here, deliberately: importing either entry point must not load the other.
    if sys.argv[1:] == ["--version"]:
        print(f"mllint, version {__version__}")  # as click's version option says it
    elif sys.argv[1:] in SERVER_COMMANDS:
        from mllint.lsp_start import start as start_server

        start_server()
    else:
        from mllint.cli import main

        main()


if __name__ == "__main__":
    run()
