"""The project index: the Python modules of the project being linted, and their summaries.

`ProjectIndex` knows the project's roots (the package roots of the linted paths) and finds the file of a
module name there (`pkg.models` -> `<root>/pkg/models.py`). It holds no trees: a module's summary
(`summaries.ModuleSummary`) is built from its file the first time a rule needs it, and kept per process keyed
by the file's modification time and size. It is small and picklable (only the roots travel), so the CLI
builds it once from the file list and every worker gets it with its job. The word index of which modules
call which names is the exception: a run builds it once, before its workers start (`shared_calls`), and
each worker installs it (`install_calls`) instead of reading every module of the project again.

Installed third-party packages are never part of a project unless they are what is linted: a root found
above a package (`site-packages` above `torch/`) admits only the packages linted there.

What one file's lint sees of its project, and the resolution of values across modules, is
`project_view.ProjectView`: this module imports no analysis of values, so that a command whose files
need none (the check of an empty file) does not load them.
"""

from __future__ import annotations

import contextvars
import hashlib
import itertools
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

from mllint.context import FileContext
from mllint.notebook import load as load_notebook
from mllint.source import MAX_FILE_BYTES, MAX_NOTEBOOK_BYTES, SourceError, SourceFile, SourceText, is_notebook
from mllint.source import parse_python, read_regular, read_source

INSTALLATION_DIRECTORIES = {"site-packages", "dist-packages"}
SOURCE_DIRECTORIES = {"src"}  # a project's folder of importable code (a src layout), on `sys.path` when it runs
MAX_NAMESPACE_DEPTH = 2  # namespace package folders between a module and its `src` folder


@dataclass(frozen=True)
class ModuleName:
    name: str
    is_package: bool  # an `__init__` module: its relative imports start from itself
    # the modules beside it in its package that the root has no module of: `import utils` there is a
    # Python 2 implicit relative import (or the script's own folder on `sys.path`), `pkg.utils`
    siblings: frozenset[str] = frozenset()


def module_name_of(path: str) -> tuple[str, ModuleName]:
    """The package root of a file (the first directory above it that is no package) and its module name."""
    directory, filename = os.path.split(os.path.abspath(path))
    stem = filename.rsplit(".", 1)[0]
    is_package = stem == "__init__"
    parts = [] if is_package else [stem]
    own = directory
    while os.path.exists(os.path.join(directory, "__init__.py")):
        directory, package = os.path.split(directory)
        parts.insert(0, package)
        if not package:
            break
    directory, parts = _under_source_directory(directory, parts)
    siblings = _siblings(own, directory) if own != directory else frozenset()
    return directory, ModuleName(".".join(parts) or stem, is_package, siblings)


def _under_source_directory(directory: str, parts: list[str]) -> tuple[str, list[str]]:
    """A module of a namespace package in a `src` folder (`src/toxic/model.py`, no `__init__.py`): the
    `src` folder is its root, as where a run puts it on `sys.path` (`sys.path.insert(0, "src")`, an
    installed src layout), and it is `toxic.model`."""
    found, above = directory, []
    for _ in range(MAX_NAMESPACE_DEPTH):
        found, name = os.path.split(found)
        if not name or not name.isidentifier():
            break
        above.insert(0, name)
        if os.path.basename(found) in SOURCE_DIRECTORIES:
            return found, above + parts
    return directory, parts


@lru_cache(maxsize=1024)
def _siblings(directory: str, root: str) -> frozenset[str]:
    """The modules of a package directory (`utils.py`, `nets/__init__.py`) that the root has none of."""
    try:
        names = os.listdir(directory)
    except OSError:
        return frozenset()
    found = {n[:-3] for n in names if n.endswith(".py") and n != "__init__.py"}
    found |= {n for n in names if os.path.isfile(os.path.join(directory, n, "__init__.py"))}
    return frozenset(
        n for n in found if n.isidentifier() and not os.path.exists(os.path.join(root, n + ".py")) and not os.path.isdir(os.path.join(root, n))
    )  # fmt: skip


# Per process, for files on disk: path -> ((mtime_ns, size), summary or None when it does not parse), and
# path -> ((mtime_ns, size), digest of the content).
_SUMMARIES: dict[str, tuple[tuple[int, int], object]] = {}
_DIGESTS: dict[str, tuple[tuple[int, int], str]] = {}
# path -> ((mtime_ns, size), the module's parsed context or None), the most recently used last: what
# summaries are read from, and the modules whose code an analysis reads beyond their summary (the loop
# model follows calls into their functions). Only some are kept, up to a total source size: a tree takes
# about forty times the memory of its source. A module asked for again since it was parsed (a helper's,
# a base class's, read by the lints of many files) is let go after those parsed once for their summary,
# while such modules hold at most `PROTECTED_SHARE` of the size: each module is parsed about once.
_CONTEXTS: dict[str, tuple[tuple[int, int], object]] = {}
_ASKED_AGAIN: set[str] = set()  # paths of `_CONTEXTS` asked for again since parsed
_kept_bytes = 0  # the source size of `_CONTEXTS`, kept up to date (a sum per parse grew with what is kept)
KEPT_SOURCE_BYTES = 8 << 20
PROTECTED_SHARE = 0.75
_LET_GO: list = []  # parsed modules no longer kept, to release at the end of the lint (`release_let_go`)
_MENTIONS: dict[tuple[str, object], tuple[tuple[int, int], bool]] = {}  # (path, word) -> does the file hold it
# path -> ((mtime_ns, size), its code text) of the files `_mentions` read, the most recently used last, up to
# `KEPT_TEXT_BYTES`: a module is asked for many words (the names of a method's callers' modules).
_TEXTS: dict[str, tuple[tuple[int, int], bytes]] = {}
_text_bytes = 0  # their total size
KEPT_TEXT_BYTES = 8 << 20
_FACTS: dict[tuple[str, type], tuple[tuple[int, int], object]] = {}  # (path, analysis) -> `ProjectIndex.fact`
# The editor's open Python buffers, unsaved edits included: path -> (version, text). The project reads a
# module from its buffer instead of its file; a buffer's stamp is (-version, length), never a file's.
_BUFFERS: dict[str, tuple[int, str]] = {}
_buffer_versions = itertools.count(1)
# The root of the file being linted, in this thread (`ProjectIndex.running`).
_RUNNING: contextvars.ContextVar[str | None] = contextvars.ContextVar("running", default=None)
_HELD: contextvars.ContextVar[dict | None] = contextvars.ContextVar("held", default=None)  # path -> stamp, in a lint
# Per process and project (its roots): which modules' text calls each name (`name(`), read when the first
# caller is looked for, and brought up to date once per `ProjectIndex` (once per lint in the editor).
_CALLS: dict[tuple, "_CallIndex"] = {}
# A name called: `train(`, also `train (` and a `(` on the next line (`train \` then `(`, or within brackets).
# Possessive and from a word's start: no backtracking through long words.
CALL_WORD = re.compile(rb"\b([A-Za-z_]\w*+)[ \t\f\r\n\\]*+\(")
# A bare decorator (`@register` over a class) calls what it names, by its last name.
DECORATOR = re.compile(rb"^[ \t]*+@[ \t]*+(?:\w++[ \t]*+\.[ \t]*+)*+(\w++)[ \t]*+(?:#[^\n]*+)?$", re.MULTILINE)
# A class statement's bases (`class SimCLR(ContrastiveStepMixin, nn.Module):`), each by its last name: the
# index's word `(ContrastiveStepMixin)(` says the module derives a class from it.
CLASS_BASES = re.compile(rb"\bclass[ \t]++\w++[ \t]*+\(([^)]*+)\)")
# A loop calling each of its items (`for cb in callbacks:` then `cb(model, score)` within a few lines): the
# index's word `__call__(` says the module may run an object's `__call__`.
ITEM_CALL = re.compile(rb"\bfor[ \t]++(\w++)[ \t]++in\b[^\n]*+\n(?:[^\n]*+\n){0,3}?[ \t]*+\1[ \t]*+\(")
BASE_NAME = re.compile(rb"([A-Za-z_]\w*+)[ \t\r\n\\]*+(?=,|$)")
JSON_SEPARATOR_ESCAPE = re.compile(rb"\\[nrtf]")
# Attributes a module stores on an object other than `self` (`cfg.head = ...`, `cfg.lr *= 2`, `setattr(cfg,
# "head", v)`): the index's word `.head=`; and stores of attributes its text does not name (`setattr(cfg, k,
# v)`, `vars(args).update(d)`, `cfg.__dict__.update(d)`): the word `ANY_ATTRIBUTE`.
STORED_ATTRIBUTE = re.compile(rb"(?<!\bself)\.[ \t]*+(\w++)[ \t]*+(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)")
SETATTR_NAMED = re.compile(rb"\bsetattr[ \t]*+\([^,()]*+,[ \t]*+[\"'](\w++)[\"']")
ANY_ATTRIBUTE_STORE = re.compile(
    rb"\bsetattr[ \t]*+\((?![ \t]*+self[ \t]*+,)[^,()]*+,[ \t]*+(?![\"'])"
    rb"|\bvars[ \t]*+\([^()]*+\)[ \t]*+\.[ \t]*+update\b|\.[ \t]*+__dict__[ \t]*+(?:\.[ \t]*+update\b|\[)"
)
STORES_KEY = "="  # a dependency on which modules store an attribute: `.head=`
ANY_ATTRIBUTE = ".*" + STORES_KEY
MAX_PROJECT_FILES = 20000  # beyond, the rest of a huge directory is not searched for callers
CALLS_KEY = "("  # a dependency on which modules call a name: `train(`
FILE_KEY = "file:"  # a dependency on a file that is no module: a configuration a lint read
Summarize = Callable[[FileContext, str, Callable[[], object]], object]  # `ModuleSummary.of_context`


class ProjectIndex:
    def __init__(self, roots: dict[str, frozenset[str] | None]) -> None:
        # root directory -> the top-level names it admits (None: every module in it)
        self.roots = roots
        self._located: dict[tuple[str | None, str], str | None] = {}
        self._script_roots: dict[str, str] = {}  # a file -> its package root (`running`), as `_located` keeps modules
        self._recorders: list[dict[str, str | None]] = []
        self._calls_fresh = False

    @classmethod
    def for_paths(cls, paths: Iterable[str]) -> "ProjectIndex":
        """The project of the linted paths: each named directory that is no package, all of it, and its
        `src` directory when that is no package either (the src layout: `from pkg.models import Net` is
        `src/pkg/models.py`); each file's (or package's) package root, admitting only that package (a root
        may be `site-packages`)."""
        roots: dict[str, set[str] | None] = {}
        for path in paths:
            absolute = os.path.abspath(path)
            if os.path.isdir(absolute) and not os.path.isfile(os.path.join(absolute, "__init__.py")):
                roots[absolute] = None
                sources = [os.path.join(absolute, d) for d in sorted(SOURCE_DIRECTORIES)]
                sources = [d for d in sources if os.path.isdir(d) and not os.path.isfile(os.path.join(d, "__init__.py"))]
                roots.update((d, None) for d in sources if d not in roots)  # its src layout (a `src` package is no root)
                continue
            root, module = module_name_of(os.path.join(absolute, "__init__.py") if os.path.isdir(absolute) else absolute)
            if root in roots and roots[root] is None:
                continue
            if "." in module.name or module.is_package or os.path.basename(root) in INSTALLATION_DIRECTORIES:
                roots.setdefault(root, set()).add(module.name.split(".")[0])  # type: ignore[union-attr]
            else:
                roots[root] = None  # a script: the directory of scripts it lives in is the project
        return cls({root: None if tops is None else frozenset(tops) for root, tops in roots.items()})

    @classmethod
    def of_run(cls, named: list[str], files: list[str]) -> dict[str, "ProjectIndex"]:
        """Each file's project in a run: that of the first named path holding it (the file itself, or a
        directory above it), with the package roots of that path's files; never what else is named."""
        held: dict[str, list[str]] = {}
        for file in files:
            absolute = os.path.abspath(file)
            origin = next((p for p in named if _holds(os.path.abspath(p), absolute)), file)
            held.setdefault(origin, []).append(file)
        projects = {origin: cls.for_paths([origin, *inside]) for origin, inside in held.items()}
        return {file: projects[origin] for origin, inside in held.items() for file in inside}

    def __getstate__(self) -> dict:
        return {"roots": self.roots, "calls_fresh": self._calls_fresh}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["roots"])
        # A worker of a run trusts the word index its run built and installed (see `install_calls`).
        self._calls_fresh = state["calls_fresh"] and self._calls_key() in _CALLS

    def shared_calls(self) -> tuple:
        """The word index of which modules call which names, up to date, for a run to build once and hand
        to its workers (`install_calls`)."""
        return self._calls_key(), self._calls()

    # Where modules are.
    @contextmanager
    def running(self, path: str) -> Iterator[None]:
        """Modules found as a run of the file at `path` finds them: its own root (a script's directory,
        `sys.path[0]`) searched before the others, so that `from model import Net` in `a/train.py` is
        `a/model.py` when `b/model.py` exists too."""
        if path not in self._script_roots:  # (asked per module searched for call sites: a walk up the folders)
            self._script_roots[path] = module_name_of(path)[0]
        token = _RUNNING.set(self._script_roots[path])
        try:
            yield
        finally:
            _RUNNING.reset(token)

    def _first(self) -> str | None:
        first = _RUNNING.get()
        return first if first in self.roots else None

    def _searched(self) -> list[str]:
        first = self._first()
        return list(self.roots) if first is None else [first, *(r for r in self.roots if r != first)]

    def locate(self, module: str) -> str | None:
        """The file of a module of the project, None when the project has no such module."""
        key = (self._first(), module)
        if key not in self._located:
            self._located[key] = self._find(module)
        return self._located[key]

    def _find(self, module: str) -> str | None:
        if is_notebook(module):  # a notebook's "module" is its path in its root: it calls, it is not imported
            found = (os.path.join(root, *module.split("/")) for root in self._searched())
            return next((path for path in found if os.path.isfile(path)), None)
        parts = module.split(".")
        if not all(part.isidentifier() for part in parts):
            return None
        # a root's src layout last: a linted file's root has no source-directory root of its own
        for folder in ("", *sorted(SOURCE_DIRECTORIES)):
            for root in self._searched():
                tops = self.roots[root]
                if tops is not None and parts[0] not in tops:
                    continue
                base = os.path.join(root, folder, *parts)
                for candidate in (base + ".py", os.path.join(base, "__init__.py"), base + ".pyi"):
                    if os.path.isfile(candidate):
                        return candidate
        return None

    def summary(self, module: str, summarize: Summarize):
        """The summary of a module of the project, `summarize(ctx, path, load)` of its parsed context
        (`ModuleSummary.of_context`; `load` parses it again once let go), kept while the file is unchanged
        (None: not in the project, or it does not parse)."""
        path = self.locate(module)
        self._record(module, path)
        return None if path is None else _summary(path, module, summarize)

    def context(self, module: str):
        """The parsed context of a module of the project (its tree, names, scopes; no project of its own):
        for analyses that read a module's code, e.g. a function's body. None: no such module, or no parse."""
        path = self.locate(module)
        self._record(module, path)
        ctx = None if path is None else _context(path, module)
        if ctx is not None and ctx.read_for is None:
            ctx.read_for = self  # its `from m import *` resolve in this project
        return ctx

    def fact(self, module: str, analysis: type):
        """`analysis.of(ctx)` of a module's parsed context: a small fact, kept per process while the
        file is unchanged, when the context itself may be let go (None: no such module, or no parse)."""
        path = self.locate(module)
        self._record(module, path)
        if path is None:
            return None

        def compute():
            ctx = _context(path, module)
            return None if ctx is None else analysis.of(ctx)

        return _while_unchanged(_FACTS, (path, analysis), path, compute)

    def mentions(self, module: str, word: str | re.Pattern[bytes]) -> bool:
        """Does the module's file contain `word` (or a match of a pattern)? A cheap test before parsing
        it; recorded, as what was not read because of it depends on it too."""
        path = self.locate(module)
        self._record(module, path)
        return path is not None and _mentions(path, word)

    def modules_calling(self, name: str) -> list[str]:
        """The modules of the project whose text calls `name` (`name(`), from a word index kept per
        process; recorded, as a lint that looked for callers depends on which modules call."""
        modules = self._calls().modules(name + "(")
        self._record(name + CALLS_KEY, None, _listing_digest(modules))
        return modules

    def listed_whole(self) -> bool:
        """Does the word index list every module of the project (not cut at `MAX_PROJECT_FILES`)?"""
        return len(self._calls().files) < MAX_PROJECT_FILES

    def modules_deriving(self, name: str) -> list[str]:
        """The modules of the project whose class statements name `name` as a base (by its last name),
        from the same word index; recorded as `modules_calling`'s answer is."""
        return self.modules_calling(f"({name})")

    def modules_storing(self, attribute: str, named: bool = False) -> list[str]:
        """The modules of the project whose text stores `attribute` on an object other than `self`, or an
        attribute it does not name (`setattr(cfg, k, v)`; not with `named`), from the same word index;
        recorded as `modules_calling`'s answer is."""
        found = []
        for word in (f".{attribute}{STORES_KEY}",) if named else (f".{attribute}{STORES_KEY}", ANY_ATTRIBUTE):
            modules = self._calls().modules(word)
            self._record(word, None, _listing_digest(modules))
            found += modules
        return sorted(set(found))

    def _calls_key(self) -> tuple:
        return tuple(sorted(self.roots.items()))

    def _calls(self) -> "_CallIndex":
        calls = _CALLS.setdefault(self._calls_key(), _CallIndex())
        if not self._calls_fresh:
            calls.update(_project_modules(self.roots))
            self._calls_fresh = True
        return calls

    def digest(self, module: str) -> str | None:
        """What a cached result checks: the digest of the module's file (None: no such module), for
        `name(` (`.name=`), of the list of modules that call (store) the name, and for `file:PATH`, of that file."""
        if module.endswith((CALLS_KEY, STORES_KEY)):
            return _listing_digest(self._calls().modules(module))
        if module.startswith(FILE_KEY):
            path = module[len(FILE_KEY):]
            return _digest(path) if os.path.isfile(path) else None
        path = self.locate(module)
        return None if path is None else _digest(path)

    # Which modules a lint consulted, for the result cache.
    @contextmanager
    def recording(self) -> Iterator[dict[str, str | None]]:
        consulted: dict[str, str | None] = {}
        self._recorders.append(consulted)
        try:
            yield consulted
        finally:
            self._recorders.remove(consulted)

    def read_file(self, path: str) -> None:
        """A lint read this file (a configuration): its content is part of what the findings depend on."""
        path = os.path.abspath(path)
        self._record(FILE_KEY + path, path if os.path.isfile(path) else None)

    def _record(self, module: str, path: str | None, digest: str | None = None) -> None:
        if self._recorders:
            digest = digest if path is None else _digest(path)
            for recorder in self._recorders:
                recorder[module] = digest


def use_buffers(buffers: dict[str, str]) -> None:
    """The editor's open Python buffers (path -> text): what the project reads for those modules until
    the next call; a buffer closed is read from its file again."""
    buffers = {os.path.abspath(path): text for path, text in buffers.items()}
    for path in [p for p in _BUFFERS if p not in buffers]:
        del _BUFFERS[path]
    for path, text in buffers.items():
        known = _BUFFERS.get(path)
        if known is None or known[1] != text:
            _BUFFERS[path] = (next(_buffer_versions), text)


def open_buffer(path: str) -> str | None:
    """The text of an open editor buffer the project reads for the file at `path` (None: not open)."""
    buffer = _BUFFERS.get(os.path.abspath(path))
    return None if buffer is None else buffer[1]


def _holds(named: str, path: str) -> bool:
    return path == named or path.startswith(named.rstrip(os.sep) + os.sep)


def install_calls(shared: tuple) -> None:
    """In a worker process: the word index its run built (`ProjectIndex.shared_calls`)."""
    key, calls = shared
    _CALLS[key] = calls


def _project_modules(roots: dict[str, frozenset[str] | None]) -> dict[str, str]:
    """file -> module name, for the Python files of the project's roots (packages and scripts whose
    names can be imported; hidden and non-identifier directories, such as virtual environments' `.venv`
    or `site-packages`, are skipped), at most `MAX_PROJECT_FILES`; and its notebooks, named by their path
    from the root (`notebooks/explore.ipynb`). Two scripts of different roots may share a name (`a/train.py`,
    `b/train.py`): which one the name is depends on the file linted (`ProjectIndex.running`)."""
    found: dict[str, str] = {}
    for root, tops in sorted(roots.items(), key=lambda item: -len(item[0])):  # a file is named from the root nearest it (a src folder's)
        starts = [root] if tops is None else [os.path.join(root, top) for top in sorted(tops)]
        for start in starts:
            if tops is not None and os.path.isfile(start + ".py"):
                found.setdefault(start + ".py", os.path.basename(start))
            for directory, directories, files in os.walk(start):
                directories[:] = sorted(d for d in directories if d.isidentifier() and d != "site-packages")
                relative = os.path.relpath(directory, root)
                package = [] if relative == "." else relative.split(os.sep)
                for name in sorted(files):
                    stem = name[:-3]
                    if name.endswith(".py") and stem.isidentifier():
                        module = ".".join(package if stem == "__init__" else [*package, stem])
                        if module:
                            found.setdefault(os.path.join(directory, name), module)
                    elif is_notebook(name):  # a caller of the project's functions, by its path
                        found.setdefault(os.path.join(directory, name), "/".join([*package, name]))
                if len(found) >= MAX_PROJECT_FILES:
                    return found
    return found


class _CallIndex:
    """Which modules' text calls each name: word (`train(`) -> files, kept up to date by file stamps."""

    def __init__(self) -> None:
        self.calls: dict[str, set[str]] = {}
        self.files: dict[str, tuple[str, tuple[int, int], tuple[str, ...]]] = {}  # path -> module, stamp, words

    def modules(self, word: str) -> list[str]:
        return sorted({self.files[path][0] for path in self.calls.get(word, ())})

    def update(self, modules: dict[str, str]) -> None:
        for path in [p for p in self.files if p not in modules]:
            self._forget(path)
        for path, module in modules.items():
            stamp = _stamp(path)
            known = self.files.get(path)
            if known is not None and known[:2] == (module, stamp):
                continue
            if known is not None:
                self._forget(path)
            text = _code_text(path)
            bases = {b"(" + b + b")" for bases in CLASS_BASES.findall(text) for b in BASE_NAME.findall(bases.strip())}
            dispatch = {b"__call__"} if ITEM_CALL.search(text) else set()
            called = set(CALL_WORD.findall(text)) | set(DECORATOR.findall(text))
            words = tuple(sys.intern(w.decode("ascii") + "(") for w in called | bases | dispatch) + stored_words(text)
            for word in words:
                self.calls.setdefault(word, set()).add(path)
            self.files[path] = (module, stamp, words)

    def _forget(self, path: str) -> None:
        for word in self.files.pop(path)[2]:
            self.calls[word].discard(path)


def stored_words(text: bytes) -> tuple[str, ...]:
    """The index's words for the attributes a module's `text` stores (`STORED_ATTRIBUTE`)."""
    named = {*STORED_ATTRIBUTE.findall(text), *SETATTR_NAMED.findall(text)}
    words = {sys.intern("." + n.decode("ascii") + STORES_KEY) for n in named}
    return tuple(words | ({ANY_ATTRIBUTE} if ANY_ATTRIBUTE_STORE.search(text) else set()))


def _code_text(path: str) -> bytes:
    """A file's text as the word index reads it: in a notebook's JSON, the escapes that separate
    words (`\\n` in `"x = 1\\nstep(x)"`) are spaces."""
    content = _content(path) or b""
    return JSON_SEPARATOR_ESCAPE.sub(b" ", content) if is_notebook(path) else content


def _listing_digest(modules: list[str]) -> str:
    return hashlib.sha256("\n".join(modules).encode()).hexdigest()


@contextmanager
def stamps_held() -> Iterator[None]:
    """During one lint, each file of the project is taken as it was when first asked about: its stamp is
    read once, not by every cached answer about it (tens of thousands of `stat` calls in a package)."""
    token = _HELD.set({} if _HELD.get() is None else _HELD.get())
    try:
        yield
    finally:
        _HELD.reset(token)


def _stamp(path: str) -> tuple[int, int]:
    held = _HELD.get()
    if held is None:
        return _read_stamp(path)
    stamp = held.get(path)
    if stamp is None:
        stamp = held[path] = _read_stamp(path)
    return stamp


def _read_stamp(path: str) -> tuple[int, int]:
    buffer = _BUFFERS.get(path)
    if buffer is not None:
        return (-buffer[0], len(buffer[1]))
    try:
        status = os.stat(path)
    except OSError:
        return (0, -1)
    return (status.st_mtime_ns, status.st_size)


def _while_unchanged(cache: dict, key, path: str, compute):
    """`compute()`, kept in `cache` under `key` while the file at `path` keeps its mtime and size."""
    stamp = _stamp(path)
    known = cache.get(key)
    if known is None or known[0] != stamp:
        known = cache[key] = (stamp, compute())
    return known[1]


def _content(path: str) -> bytes | None:
    buffer = _BUFFERS.get(path)
    if buffer is not None:
        return buffer[1].encode("utf-8", "surrogatepass")
    try:
        return read_regular(path, MAX_NOTEBOOK_BYTES if is_notebook(path) else MAX_FILE_BYTES)
    except (OSError, SourceError):
        return None


def _digest(path: str) -> str:
    def compute() -> str:
        content = _content(path)
        return "" if content is None else hashlib.sha256(content).hexdigest()

    return _while_unchanged(_DIGESTS, path, path, compute)


def _summary(path: str, module: str, summarize: Summarize):
    def compute():
        ctx = _context(path, module)
        return None if ctx is None else summarize(ctx, path, lambda: _context(path, module))

    return _while_unchanged(_SUMMARIES, path, path, compute)


def _context(path: str, module: str):
    global _kept_bytes
    stamp = _stamp(path)
    known = _CONTEXTS.pop(path, None)
    if known is None or known[0] != stamp:
        if known is not None:
            _LET_GO.append(known[1])
            _kept_bytes -= known[0][1]
        _ASKED_AGAIN.discard(path)
        _CONTEXTS[path] = known = (stamp, _parse(path, module))
        _kept_bytes += stamp[1]
        _keep_within(path)  # only a parse adds to what is kept: a module asked again leaves it within bounds
    else:
        _ASKED_AGAIN.add(path)
        _CONTEXTS[path] = known  # the most recently used last
    return known[1]


def _keep_within(current: str) -> None:
    """Let parsed modules go, the least recently used first, until the kept ones fit `KEPT_SOURCE_BYTES`:
    those parsed once before those asked for again, unless these hold more than their share."""
    kept = _kept_bytes
    if kept <= KEPT_SOURCE_BYTES:
        return
    again = sum(_CONTEXTS[p][0][1] for p in _ASKED_AGAIN if p in _CONTEXTS)
    for path in [p for p in _CONTEXTS if p != current]:
        if kept <= KEPT_SOURCE_BYTES:
            break
        asked_again = path in _ASKED_AGAIN
        if asked_again and again <= PROTECTED_SHARE * KEPT_SOURCE_BYTES:
            continue
        size = _let_go(path)
        kept, again = kept - size, again - (size if asked_again else 0)
    for path in [p for p in _CONTEXTS if p != current]:  # what was asked for again, when that is all there is
        if kept <= KEPT_SOURCE_BYTES:
            break
        kept -= _let_go(path)


def _let_go(path: str) -> int:
    """Let a kept module go (its source size)."""
    global _kept_bytes
    stamp, ctx = _CONTEXTS.pop(path)
    _kept_bytes -= stamp[1]
    _ASKED_AGAIN.discard(path)
    _LET_GO.append(ctx)
    return stamp[1]


def forget_kept() -> None:
    """After a lint stopped midway (`budget.CutShort`): the kept modules, their summaries and facts may
    hold what was being worked out, half-built; they are let go, and made again when asked."""
    global _kept_bytes
    _LET_GO.extend(ctx for _, ctx in _CONTEXTS.values())
    _CONTEXTS.clear()
    _kept_bytes = 0
    _ASKED_AGAIN.clear()
    _SUMMARIES.clear()
    _FACTS.clear()


def release_let_go() -> None:
    """At the end of a lint, which may still have read them: the parsed modules no longer kept release
    their analyses (which refer back to them), so that reference counting frees them with their trees,
    not the cyclic garbage collector (which would also scan every module kept, after every file)."""
    while _LET_GO:
        ctx = _LET_GO.pop()
        if ctx is not None:
            ctx.release()


def _parse(path: str, module: str):
    try:
        buffer = _BUFFERS.get(path)
        source = read_source(path) if buffer is None else SourceFile(buffer[1], "utf-8", b"")
        notebook = load_notebook(source.text) if is_notebook(path) else None
        text = source.text if notebook is None else notebook.python
        tree = parse_python(text, path)
    except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    _, name = module_name_of(path)
    return FileContext(path, SourceText(text), tree, ModuleName(module, name.is_package, name.siblings), path, notebook=notebook)


def _mentions(path: str, word: str | re.Pattern[bytes]) -> bool:
    def compute() -> bool:
        content = _kept_text(path)  # a notebook's line breaks are spaces, not `\n` escapes
        return word.encode() in content if isinstance(word, str) else word.search(content) is not None

    return _while_unchanged(_MENTIONS, (path, word), path, compute)


def _kept_text(path: str) -> bytes:
    """`_code_text(path)`, read once while the file is unchanged and among the most recently asked."""
    global _text_bytes
    stamp = _stamp(path)
    known = _TEXTS.pop(path, None)
    if known is None or known[0] != stamp:
        _text_bytes -= len(known[1]) if known is not None else 0
        known = (stamp, _code_text(path))
        _text_bytes += len(known[1])
    _TEXTS[path] = known
    while _text_bytes > KEPT_TEXT_BYTES and len(_TEXTS) > 1:
        _text_bytes -= len(_TEXTS.pop(next(iter(_TEXTS)))[1])
    return known[1]
