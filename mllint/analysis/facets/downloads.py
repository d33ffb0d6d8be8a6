"""Files fetched from the network (ML807): which download a path or a stream read by `torch.load` comes from.

A download is a call that fetches a URL: one that writes it to a file named by an argument
(`urllib.request.urlretrieve(url, path)`, `torch.hub.download_url_to_file(url, dst)`), one that returns
the file it wrote (`wget.download(url)`, `gdown.download(url, out)`, `path, _ = urlretrieve(url)`), or
one that returns the bytes (`requests.get(url).content`, `urllib.request.urlopen(url)`), or a shell command
that runs `wget` or `curl` (`os.system(f"wget {url} -O {dst}")`, `subprocess.run(["curl", url, "-o", dst])`),
which writes the names it mentions. What is read is
downloaded when it holds such a call (`io.BytesIO(requests.get(url).content)`), is the destination a
download of its function writes to before (`path` of `urlretrieve(src, path)`, by its text), or a name
bound to what a download returns. Each function's downloads are listed once.
"""
from __future__ import annotations

import ast
import re

from mllint.analysis.values.values import ValueKinds

# Downloads: qualified name -> (the position, the keyword) of the file they write; None: they return it.
WRITING = {
    "urllib.request.urlretrieve": (1, "filename"),
    "torch.hub.download_url_to_file": (1, "dst"),
    "wget.download": (1, "out"),
    "gdown.download": (1, "output"),
}
FETCHING = frozenset({"requests.get", "urllib.request.urlopen", "httpx.get"})  # return what they fetch
# Shell commands: a download when the command runs `wget` or `curl`; it writes the names it mentions.
SHELL = frozenset({"os.system", "subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output", "subprocess.Popen"})
SHELL_DOWNLOAD = re.compile(r"\b(wget|curl)\b")
DOWNLOAD_TEXT = ("urlretrieve", "download", "requests", "urlopen", "httpx", "wget", "curl")


class Downloads:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._by_scope: dict[ast.AST, list[ast.Call]] = {}

    def downloaded(self, expr: ast.AST) -> ast.Call | None:
        """The download whose file or bytes `expr` (read at its place) holds; None when nothing says so."""
        held = next((c for c in self.ctx.index.within(expr, ast.Call) if self._is_download(c)), None)
        if held is not None:
            return held
        scope = self.ctx.scopes.enclosing_function(expr) or self.ctx.tree
        text = self.ctx.text(expr)
        for call in self._downloads(scope):
            if call.lineno > expr.lineno:
                break
            if any(self.ctx.text(written) == text for written in self._written(call)):
                return call
        if isinstance(expr, ast.Name):
            for value in self.ctx.analysis(ValueKinds).reaching_values(expr) or ():
                call = value.value if isinstance(value, ast.Subscript) else value  # `urlretrieve(url)[0]`
                if isinstance(call, ast.Call) and self._is_download(call):
                    return call
        return None

    def _downloads(self, scope: ast.AST) -> list[ast.Call]:
        if scope not in self._by_scope:
            calls = self.ctx.index.within(scope, ast.Call) if any(w in self.ctx.source.text for w in DOWNLOAD_TEXT) else []
            own = [c for c in calls if self._is_download(c) and (self.ctx.scopes.enclosing_function(c) or self.ctx.tree) is scope]
            self._by_scope[scope] = sorted(own, key=lambda c: (c.lineno, c.col_offset))
        return self._by_scope[scope]

    def _is_download(self, call: ast.Call) -> bool:
        name = self.ctx.qualified_name(call.func)
        shell = name in SHELL and bool(call.args) and bool(SHELL_DOWNLOAD.search(self.ctx.text(call.args[0])))
        return name in WRITING or name in FETCHING or shell

    def _written(self, call: ast.Call) -> list[ast.AST]:
        """What a download may write to: its file argument, or the names its shell command mentions
        (`f"wget {url} -O {dst}"`); none when it returns what it fetched."""
        name = self.ctx.qualified_name(call.func)
        if name in SHELL:
            return [n for n in ast.walk(call.args[0]) if isinstance(n, (ast.Name, ast.Attribute))]
        if name not in WRITING:
            return []
        position, keyword = WRITING[name]
        given = next((k.value for k in call.keywords if k.arg == keyword), None)
        given = given if given is not None else call.args[position] if len(call.args) > position else None
        return [given] if given is not None else []
