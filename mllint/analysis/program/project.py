"""The project index: the Python modules of the project being linted, and their summaries.

`ProjectIndex` knows the project's roots (the package roots of the linted paths) and finds the file of a
module name there (`pkg.models` -> `<root>/pkg/models.py`). It holds no trees: a module's `ModuleSummary`
(see `summaries.py`) is built from its file the first time a rule needs it, and kept per process keyed
by the file's modification time and size. It is small and picklable (only the roots travel), so the CLI
builds it once from the file list and every worker gets it with its job. The word index of which modules
call which names is the exception: a run builds it once, before its workers start (`shared_calls`), and
each worker installs it (`install_calls`) instead of reading every module of the project again.

Installed third-party packages are never part of a project unless they are what is linted: a root found
above a package (`site-packages` above `torch/`) admits only the packages linted there.

`ProjectView` is what one file's lint sees: its own module's summary comes from the text being linted
(an editor's unsaved buffer, standard input), the others from disk. It resolves the value descriptors of
`values.py` across modules (`Called(Ref("pkg.models.Net"))` -> what `Net.forward` returns) and records
every module it consulted, with the digest of its file: a cached result stays valid while they do.
"""
from __future__ import annotations

import ast
import contextvars
import dataclasses
import hashlib
import itertools
import os
from functools import lru_cache
import re
import sys
from weakref import WeakKeyDictionary
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from mllint.analysis.program.calls import bind_arguments
from mllint.analysis.program.registries import applied_stores, filed_name, is_registry, library_registrations, registrations
from mllint.analysis.syntax.names import is_self_attribute
from mllint.analysis.syntax.tree import own_method
from mllint.analysis.values.library_models import is_module_base
from mllint.analysis.program.summaries import FUNCTIONS, ClassSummary, ModuleSummary, function_returns, top_level_definition
from mllint.analysis.values.reaching import MAX_DEPTH
from mllint.analysis.values.values import (
    Called, Chained, Complement, Exp, Item, Keyed, Kind, Made, Mapped, Member, Mixed, OneOf, Own, Origin, Packed, Padded, Passage, Passed, Ref, Selected, Source,
    Unwrapped, Value, SEQUENTIAL, at_key, built_record, canonical_class, makes_task_model,
    ValueKinds,
)  # fmt: skip
from mllint.context import FileContext
from mllint.findings import Position
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
_SUMMARIES: dict[str, tuple[tuple[int, int], ModuleSummary | None]] = {}
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
MAX_SUBCLASSES = 16  # project classes derived from one class that are searched for a method it lacks
MAX_PROJECT_FILES = 20000  # beyond, the rest of a huge directory is not searched for callers
CALLS_KEY = "("  # a dependency on which modules call a name: `train(`
FILE_KEY = "file:"  # a dependency on a file that is no module: a configuration a lint read


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

    def summary(self, module: str) -> ModuleSummary | None:
        """The summary of a module of the project (None: not in the project, or it does not parse)."""
        path = self.locate(module)
        self._record(module, path)
        return None if path is None else _summary(path, module)

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


def _summary(path: str, module: str) -> ModuleSummary | None:
    def compute() -> ModuleSummary | None:
        ctx = _context(path, module)
        return None if ctx is None else ModuleSummary.of_context(ctx, path, lambda: _context(path, module))

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


@dataclass(frozen=True)
class Found:
    """A resolved value: a tensor of a known kind (or a module object whose output has it)."""

    kind: Kind
    layer: bool
    node: object  # the call that made it (or applied the layer that did), in `module`'s file
    module: ModuleSummary
    line: int  # where the kind is made: the softmax call, the layer's constructor
    via: str | None = None  # the outermost class or function of the project it came through
    entry: object = None  # the call in the linted file that led to `via`
    exp_of_log: bool = False
    mixture: bool = False
    complement: bool = False  # `1 - p` on at least one path (`values.Complement`)
    padded: bool = False  # beside or into explicit zeros on at least one path (`values.Padded`)
    passage: Passage | None = None  # it reached the linted code as an argument of this call site
    contained: bool = False  # a layer whose activation a container holds: `line` is the activation's
    rows: bool = False  # each row of the tensor has the kind too (`values.over_rows`)
    defaulted: tuple[str, ...] = ()  # the parameters whose defaults chose the layer (`values.Made`)
    normalised: bool = False  # a distribution's own log-probabilities (`values.Made`)


@dataclass(frozen=True)
class Instance:
    cls: str  # an instance of this class of the project
    site: object = dataclasses.field(default=None, compare=False)  # the call that built it
    method: str | None = None  # its method of that name (`values.Member`), for a call of it


@dataclass(frozen=True)
class Chain:
    last: Instance  # an `nn.Sequential` ending in this module of the project (nested ones too): calling it calls that


@dataclass(frozen=True)
class Entity:
    name: str  # a class, function or module-level object of the project


@dataclass(frozen=True)
class Tuple:
    values: tuple  # descriptors of the elements, described in `module`
    module: ModuleSummary
    keys: tuple | None = None  # a dict's keys, by element


@dataclass(frozen=True, eq=False)
class Each:
    """A collection every item of which is `value` (a comprehension, `nn.ModuleDict` of one), described
    in `module`; with `keyed`, a dict a comprehension that keeps its keys builds (`keyed_loop`): its item at a key, `value` read
    at that key (`at_key`)."""

    value: Value | None
    module: ModuleSummary
    keyed: ast.AST | None = None

    def item(self, index) -> Value | None:
        """The descriptor of its item at `index` (a key, or not one: any item)."""
        return self.value if self.keyed is None else at_key(self.value, self.keyed, index if isinstance(index, str) else None)


@dataclass(frozen=True, eq=False)
class _Through:
    """An element of a tuple returned by `via`: once found, it says it came through `via`."""

    value: Value | None
    via: str
    entry: object


@dataclass(frozen=True, eq=False)
class _Either:
    """An element of tuples that paths of the code return (`forward`s of two classes an if/else chooses
    between): (descriptor, its module) for each; known when they agree."""

    options: tuple[tuple[Value, ModuleSummary], ...]


@dataclass(frozen=True)
class TaskModel:
    """A transformers task model (`AutoModelForSequenceClassification.from_pretrained(...)`), made wherever
    (a builder of the project returning it, in a tuple too): calling it gives raw `.logits`."""


Resolved = Found | Instance | Chain | Entity | Tuple | Each | TaskModel


def place_in(ctx, home, node: ast.AST) -> str:
    """Where `node` of the module `home` is, seen from the linted file `ctx`: `line 12` there, else
    `utils.py:12`."""
    if home is ctx:
        return f"line {node.lineno}"
    return f"{ctx.analysis(ProjectView).display_path(home.real_path or home.path)}:{node.lineno}"


def followed_view(ctx) -> "ProjectView":
    """The project as a file sees it; a module read for another file's lint (no project of its own) sees
    the project it was read for, so its helpers' calls of further modules are followed too."""
    view = ctx.analysis(ProjectView)
    if view.index is None and ctx.read_for is not None:
        view = ProjectView(ctx)
        view.index = ctx.read_for
    return view


class ProjectView:
    """What one file's lint knows of its project (an analysis: `ctx.analysis(ProjectView)`)."""

    def __init__(self, ctx, index: "ProjectIndex | None" = None) -> None:
        self.ctx = ctx
        self.index: ProjectIndex | None = index or ctx.project
        self._global_values: dict[str, tuple[object, ast.AST] | None] = {}
        self._subclasses: dict[str, list[str]] = {}
        self._tables: dict[str, list[tuple[str, object]] | None] = {}
        self._module_setters: dict[str, bool] = {}  # class -> `defines_module`
        self._displayed: dict[str, str] = {}  # a file's path -> as findings show it
        self.dispatched: dict[tuple, list] = {}  # `hierarchy.dispatched_methods`, per (context, class, name, caller)
        self.lineages: dict[tuple, tuple] = {}  # `hierarchy.lineage`, per (context, class)
        self.self_classes: dict[tuple, tuple] = {}  # `hierarchy.self_classes`, per (context, class)

    @property
    def own(self) -> ModuleSummary:
        """The linted file's summary, from its text: built only when a value leads into its own classes."""
        return self.ctx.analysis(ModuleSummary)

    # Finding classes and functions by qualified name.
    @property
    def own_name(self) -> str:
        """The linted file's module name, as its summary has it ("" when not known), without building it."""
        return self.ctx.module.name if self.ctx.module else ""

    def summary(self, module: str) -> ModuleSummary | None:
        if module == self.own_name:  # the linted file: from its text
            return self.own
        return None if self.index is None else self.index.summary(module)

    def find(self, qualified: str) -> tuple[ModuleSummary, str] | None:
        """The module that defines `qualified` (following re-exports) and the name there."""
        return find_definition(self.summary, qualified)

    def function(self, qualified: str):
        """(the context of its module, its node) for a function of the project, following re-exports; the
        linted file's own functions come from its tree. None for anything else (classes, unknown names)."""
        found = self.find(qualified)  # the summaries first: a module is parsed again only for a function it has
        if found is None or found[1] not in found[0].functions:
            return None
        summary, name = found
        ctx = self.ctx if summary is self.own else self.index.context(summary.name)  # type: ignore[union-attr]
        defined = top_level_definition(ctx.tree, FUNCTIONS, name) if ctx is not None else None
        return (ctx, defined) if defined is not None else None

    def library_name(self, qualified: str | None) -> str | None:
        """What a name of the project stands for where a module of the project imports it from outside
        (`torch.cuda.OutOfMemoryError` of `utils.CudaOOM`, with `from torch.cuda import OutOfMemoryError as
        CudaOOM` or `CudaOOM = torch.cuda.OutOfMemoryError` in `utils.py`), following re-exports; any other
        name as it is."""
        for _ in range(MAX_DEPTH):
            module, _, member = (qualified or "").rpartition(".")
            summary = self.summary(module) if module else None
            if summary is None or member in summary.classes or member in summary.functions:
                return qualified
            if member in summary.variables:  # an alias assigned (`OOMError = torch.cuda.OutOfMemoryError`)
                found = self.global_value(qualified)
                target = found[0].qualified_name(found[1]) if found is not None and isinstance(found[1], ast.Name | ast.Attribute) else None
                if target is None or target == qualified:
                    return qualified
                qualified = target
                continue
            target = summary.imports.get(member)
            if not target or target == qualified:
                return qualified
            qualified = target
        return qualified

    def global_value(self, qualified: str) -> tuple[object, ast.AST] | None:
        """(the context of its module, the value) of a module-level name of another module of the project
        bound once (`mone = one * -1` of `from utils import mone`, `FAKE` of `REAL, FAKE = -1.0, 1.0`), following
        re-exports; None otherwise. Worked out once per name."""
        if qualified not in self._global_values:
            self._global_values[qualified] = self._global_value(qualified)
        return self._global_values[qualified]

    def _global_value(self, qualified: str) -> tuple[object, ast.AST] | None:
        found = self.find(qualified)
        if found is None:  # a name assigned with others is no summary variable
            module, _, member = qualified.rpartition(".")
            summary = self.summary(module) if module else None
            found = (summary, member) if summary is not None and member not in summary.imports else None
        if found is None or found[0] is self.own or self.index is None:
            return None
        ctx = self.index.context(found[0].name) if found[1] not in found[0].classes and found[1] not in found[0].functions else None
        if ctx is None:
            return None
        stores = [
            n for s in ctx.tree.body if not isinstance(s, (*FUNCTIONS, ast.ClassDef))
            for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == found[1] and isinstance(n.ctx, ast.Store)
        ]  # fmt: skip
        values = [value for n in ctx.tree.body if isinstance(n, ast.Assign) for value in _assigned_to(n, found[1])]
        return (ctx, values[0]) if len(values) == 1 and len(stores) == 1 else None

    def class_summary(self, qualified: str) -> tuple[ModuleSummary, ClassSummary] | None:
        found = self.find(qualified)
        if found is None or found[1] not in found[0].classes:
            return None
        return found[0], found[0].classes[found[1]]

    def is_module_class(self, qualified: str, depth: int = 0) -> bool:
        """Does the project class derive from `torch.nn.Module` (directly, by alias, or via project classes)?"""
        found = self.class_summary(qualified)
        if found is None or depth > MAX_DEPTH:
            return False
        return any(is_module_base(base) or self.is_module_class(base, depth + 1) for base in found[1].bases)

    def subclasses(self, qualified: str) -> list[str]:
        """The project classes that derive from the project class `qualified`, directly or through others
        (breadth first, at most `MAX_SUBCLASSES`): in its module, the linted file, and the modules whose
        class statements name it as a base (`ProjectIndex.modules_deriving`)."""
        found = self.find(qualified)
        if found is None or found[1] not in found[0].classes:
            return []
        root = f"{found[0].name}.{found[1]}"
        if root not in self._subclasses:
            derived: list[str] = []
            queue = [root]
            while queue and len(derived) < MAX_SUBCLASSES:
                base = queue.pop(0)
                module, _, name = base.rpartition(".")
                deriving = self.index.modules_deriving(name) if self.index is not None else []
                for summary in filter(None, map(self.summary, dict.fromkeys([module, self.own_name, *deriving]))):
                    for cls in _classes_by_base(summary).get(name, ()):
                        named = f"{summary.name}.{cls.name}"
                        if named not in derived and named != root and any(self._names(b, base) for b in cls.bases):
                            derived.append(named)
                            queue.append(named)
            self._subclasses[root] = derived[:MAX_SUBCLASSES]
        return self._subclasses[root]

    def base_modules(self, qualified: str) -> list[str]:
        """The modules that define the project bases of a project class, its bases' bases too."""
        found, queue = [], [qualified]
        while queue and len(found) < MAX_SUBCLASSES:
            summary = self.class_summary(queue.pop(0))
            for base in summary[1].bases if summary is not None else ():
                defined = self.find(base)
                if defined is not None and defined[1] in defined[0].classes and defined[0].name not in found:
                    found.append(defined[0].name)
                    queue.append(f"{defined[0].name}.{defined[1]}")
        return found

    def _names(self, qualified: str, cls: str) -> bool:
        """Does a qualified name (a base as its module imports it) name the project class `cls`?"""
        found = self.find(qualified) if qualified.rpartition(".")[2] == cls.rpartition(".")[2] else None
        return found is not None and f"{found[0].name}.{found[1]}" == cls

    def forward_of(self, qualified: str) -> tuple[ModuleSummary, ClassSummary] | None:
        """The project class (this one, a project base, or for a mixin the one class mixing it in that has
        one) whose `forward` instances of `qualified` run."""
        return self.method_of(qualified, "forward")

    def method_of(self, qualified: str, name: str) -> tuple[ModuleSummary, ClassSummary] | None:
        """The project class whose method `name` instances of `qualified` run: this one or a project base
        (depth first, in order); when none has it, the one the project's subclasses agree on (a mixin's
        `self.forward(x)` runs the forward of the model that mixes it in)."""
        found = self._inherited(qualified, name, 0)
        if found is not None:
            return found
        derived = {(m.name, c.name): (m, c) for s in self.subclasses(qualified) if (f := self._inherited(s, name, 0)) for m, c in [f]}
        return next(iter(derived.values())) if len(derived) == 1 else None

    def _inherited(self, qualified: str, name: str, depth: int) -> tuple[ModuleSummary, ClassSummary] | None:
        found = self.class_summary(qualified)
        if found is None or depth > MAX_DEPTH:
            return None
        if name in found[1].methods:
            return found
        return next((f for base in found[1].bases if (f := self._inherited(base, name, depth + 1)) is not None), None)

    def is_module_like(self, qualified: str) -> bool:
        """A module class of the project, or a mixin of one (a class every module class derived from it
        makes a module, as `class Net(ScoringMixin, nn.Module)` does)."""
        return self.is_module_class(qualified) or any(self.is_module_class(s) for s in self.subclasses(qualified))

    # What values are.
    def origin(self, expr: ast.AST, binding=None, turn: tuple | None = None) -> Origin | None:
        """Where a softmax/log_softmax/sigmoid/Linear value was made, if every way `expr` can get its
        value agrees on the kind: in the linted file, or in a class or function of the project; under
        `binding`, through the arguments of one call site (`values.ValueKinds.value` describes it); in the
        `turn` (loop, key) of a loop over a dict, read at that key (`values.at_key`)."""
        value = self.ctx.analysis(ValueKinds).value(expr, binding=binding)
        return self.origin_of(at_key(value, *turn) if turn and value is not None else value)

    def origin_of(self, value: Value | None) -> Origin | None:
        """`origin` of a value descriptor (one the objects layer makes: a project model's call)."""
        found = None if value is None else self.resolve(value, self.own)
        if not isinstance(found, Found) or found.layer:
            return None
        if found.via is None and found.module is self.own and found.passage is None:
            return Origin(found.kind, found.node, exp_of_log=found.exp_of_log, mixture=found.mixture, complement=found.complement, padded=found.padded, normalised=found.normalised)
        source = Source(found.via or "", *self.line_of(found.module, found.line))
        return Origin(found.kind, found.entry or found.node, source, found.exp_of_log, found.mixture, found.passage, found.complement, found.padded, found.normalised)

    def instance_class(self, value: Value) -> str | None:
        """The project class an object was built from (directly or by a factory function)."""
        found = self.resolve(value, self.own)
        return found.cls if isinstance(found, Instance) and found.method is None else None

    def resolve(self, value: Value | None, module: ModuleSummary, depth: int = 0) -> Resolved | None:
        if value is None or depth > MAX_DEPTH:
            return None
        if isinstance(value, Made):
            line = _placed_line(value)
            contained = value.activation is not None
            return Found(value.kind, value.layer, value.node, module, line, contained=contained, rows=value.rows, defaulted=value.defaulted, normalised=value.normalised)
        if isinstance(value, Ref):
            return Entity(value.name)
        if isinstance(value, Exp):
            inner = self.resolve(value.value, module, depth + 1)
            tensor = isinstance(inner, Found) and not inner.layer and inner.kind is Kind.LOG_PROBABILITIES
            return dataclasses.replace(inner, kind=Kind.PROBABILITIES, exp_of_log=True) if tensor else None
        if isinstance(value, Complement):
            inner = self.resolve(value.value, module, depth + 1)
            probabilities = isinstance(inner, Found) and not inner.layer and inner.kind in (Kind.PROBABILITIES, Kind.SIGMOID)
            if probabilities and _of_own_attribute(inner.node):
                return inner  # a rate the module learns (`torch.sigmoid(self.p_logit)`), not a prediction
            return dataclasses.replace(inner, complement=True) if probabilities else None
        if isinstance(value, Padded):
            inner = self.resolve(value.value, module, depth + 1)
            probabilities = isinstance(inner, Found) and not inner.layer and inner.kind is Kind.PROBABILITIES
            return dataclasses.replace(inner, padded=True) if probabilities else None
        if isinstance(value, OneOf):
            return _agreed([self.resolve(v, module, depth + 1) for v in value.values])
        if isinstance(value, Packed):
            return Tuple(value.values, module, value.keys)
        if isinstance(value, Mixed) and value.joined:  # `torch.stack(dists, 1)`: a tensor of what its slices agree on
            return _agreed([self.resolve(v, module, depth + 1) for v in value.values])
        if isinstance(value, Keyed):
            return Each(value.entry, module, value.comprehension)
        if isinstance(value, Mixed) and value.stacked:
            return Each(value.values[0], module) if len(value.values) == 1 else None
        if isinstance(value, Mixed):
            return _combined([self.resolve(v, module, depth + 1) for v in value.values])
        if isinstance(value, Passed):
            caller = self.summary(value.module)
            found = self.resolve(value.value, caller, depth + 1) if caller is not None else None
            if isinstance(found, Found):  # where it was made is in the caller's code, not the linted file's
                return dataclasses.replace(found, entry=None, passage=value.passage)
            return found
        if isinstance(value, _Either):
            return _agreed([self.resolve(v, m, depth + 1) for v, m in value.options])
        if isinstance(value, _Through):
            found = self.resolve(value.value, module, depth + 1)
            if not isinstance(found, Found):
                return found
            return dataclasses.replace(found, via=value.via, entry=value.entry or found.entry)
        if isinstance(value, Mapped):  # `adj @ logits + bias`: still raw logits
            found = self.resolve(value.value, module, depth + 1)
            return found if isinstance(found, Found) and not found.layer and found.kind is Kind.LOGITS else None
        if isinstance(value, Selected):
            found = self.resolve(value.value, module, depth + 1)
            return found if isinstance(found, Found) and not found.layer else None
        if isinstance(value, Item) and isinstance(value.index, ast.AST):  # read at a loop's turn not taken: at any key
            value = Item(value.value, ...)
        if isinstance(value, Item):
            packed = self.resolve(value.value, module, depth + 1)
            if value.index is None and isinstance(packed, Found) and not packed.layer and packed.rows:  # a tensor's row
                return packed
            if isinstance(packed, Each):
                return self.resolve(packed.item(value.index), packed.module, depth + 1)
            if isinstance(packed, Found) and not packed.layer and (value.index is ... or isinstance(value.index, int)):
                return packed  # `probs[a]`, `probs[0]`: values of a tensor
            index = packed.keys.index(value.index) if isinstance(packed, Tuple) and value.index in (packed.keys or ()) else value.index
            if not isinstance(packed, Tuple) or not isinstance(index, int) or (packed.keys is not None) != isinstance(value.index, str):
                return None  # indexing another tensor, or an unknown container: unknown
            if not -len(packed.values) <= index < len(packed.values):
                return None
            return self.resolve(packed.values[index], packed.module, depth + 1)
        if isinstance(value, Unwrapped):  # `model.module`: the model, unless its class has a `module` of its own
            found = self.resolve(value.value, module, depth + 1)
            return None if isinstance(found, Instance) and self._sets_module(found.cls) else found
        if isinstance(value, Own):  # `self` in a method: an instance of its class, a module or not
            return Instance(value.cls)
        if isinstance(value, Member):  # a method of an instance, for `_call`; a field of a record (`out.scores`)
            inner = self.resolve(value.value, module, depth + 1)
            if isinstance(inner, Tuple) and value.name in (inner.keys or ()):
                return self.resolve(inner.values[inner.keys.index(value.name)], inner.module, depth + 1)
            if inner is None and isinstance(value.value, Called):  # `trainer.predict_proba(x)` of a plain class
                inner = self._plain_instance(value.value, module, depth)
            return dataclasses.replace(inner, method=value.name) if isinstance(inner, Instance) and inner.method is None else None
        if isinstance(value, Called) and isinstance(value.callee, Passed):  # `model(x)`, `model` a parameter
            caller = self.summary(value.callee.module)
            found = self._call(Called(value.callee.value, value.node), caller, depth) if caller is not None else None
            return dataclasses.replace(found, entry=None, passage=value.callee.passage) if isinstance(found, Found) else found
        if isinstance(value, Chained):
            last = self.resolve(value.last, module, depth + 1)
            if isinstance(last, Found) and last.layer:  # a builder's `nn.Sequential(..., nn.Softmax(-1))`: the same layer
                return last
            return Chain(last) if isinstance(last, Instance) else last if isinstance(last, Chain) else None
        if isinstance(value, Called):
            return self._call(value, module, depth)
        return None

    def _sets_module(self, qualified: str) -> bool:
        """Does the project class have a `module` of its own (a wrapper of its own, not torch's)? Worked out
        once per class; a class not found counts as one that does."""
        if qualified not in self._module_setters:
            found = self.class_summary(qualified)
            node = found[1].definition()[1] if found is not None else None
            self._module_setters[qualified] = node is None or defines_module(node)
        return self._module_setters[qualified]

    def _call(self, value: Called, module: ModuleSummary, depth: int) -> Resolved | None:
        if isinstance(value.callee, OneOf):  # `model = Wide() if wide else Narrow()`: known when the calls agree
            return _agreed([self._call(Called(v, value.node), module, depth + 1) for v in value.callee.values])
        filed = self._registered(value.callee, module, depth) if isinstance(value.callee, Item | Selected) else None
        if filed:  # `MODELS["resnet"](n)`, `MODELS[args.arch](n)`: known when what may be called agrees
            return _agreed([self._call(Called(Ref(name), value.node), module, depth + 1) for name in filed])
        built = self._built_from_table(value, module, depth)
        if built is not None:
            return built
        callee = self.resolve(value.callee, module, depth + 1)
        callee = callee.last if isinstance(callee, Chain) else callee
        if isinstance(callee, Found):
            if not callee.layer:
                return None
            # Where the kind is made: where the layer is applied, or where a factory built it.
            line = callee.line if callee.via or callee.contained else value.node.lineno
            return dataclasses.replace(callee, layer=False, node=value.node, line=line)
        if isinstance(callee, Instance):
            name = callee.method or "forward"
            defining = self.method_of(callee.cls, name)
            if defining is None and name == "forward" and self.derives_from(callee.cls, SEQUENTIAL):
                return self._sequence_call(callee, value, depth)
            if defining is None:
                return self._attribute_call(callee, value, depth)
            owner, cls = defining
            if (self._reassigned(callee.cls, cls, 0) or frozenset()) & cls.assigns:
                return None  # `self.head = nn.Linear(...)` in a subclass: the base's method reads another layer
            returned = cls.forward_deciding(value.decide) if name == "forward" and value.decide is not None else cls.returns_of(name)
            result = _as_called(self.resolve(returned, owner, depth + 1), self._definition(callee.cls, "__init__"), callee.site)
            if result is None and value.decide is None:
                made = (self._class_node(callee.cls), callee.site)  # what `self.layer = layer` holds
                result = self._applied(self._definition(f"{owner.name}.{cls.name}", name), value.node, module, depth, made)
            via = f"{cls.name}.{name}"
        elif isinstance(callee, TaskModel):  # its output: a record whose `.logits` are raw scores (the call may be the linted file's)
            home = self.own if self.ctx.scopes.parent(value.node) is not None else module
            return Tuple((Made(Kind.LOGITS, value.node),), home, ("logits",))
        elif isinstance(callee, Entity):
            found = self.find(callee.name)
            if found is None:
                return TaskModel() if makes_task_model(callee.name) else self._library_registered(callee.name, value.node, module)
            owner, name = found
            if name in owner.classes:
                if self.is_module_like(f"{owner.name}.{name}"):
                    return Instance(f"{owner.name}.{name}", value.node)
                return self._record(owner.classes[name], value.node, module)
            if name in owner.variables:  # a module-level object: call what it holds
                held = self.resolve(owner.variable(name), owner, depth + 1)
                if isinstance(held, Found) and held.layer:  # `probs = nn.Softmax(1)` in another module
                    entry = value.node if module is self.own else held.entry
                    return dataclasses.replace(held, layer=False, via=name, entry=entry)
                return self._call(Called(owner.variable(name), value.node), owner, depth + 1)
            result = self.resolve(owner.functions[name].returns, owner, depth + 1)
            result = _as_called(result, owner.functions[name].definition()[1], value.node, self._forwarded(value.node, module))
            if result is None:
                result = self._applied(owner.functions[name].definition()[1], value.node, module, depth)
            via = name
        else:
            return None
        if isinstance(result, Each):
            return Each(_Through(result.value, via, value.node if module is self.own else None), result.module, result.keyed)
        if isinstance(result, Tuple):  # the elements are found later: they keep where they came through
            return Tuple(tuple(_Through(v, via, value.node if module is self.own else None) for v in result.values), result.module, result.keys)
        if isinstance(result, Found):
            entry = value.node if module is self.own else result.entry
            return dataclasses.replace(result, via=via, entry=entry)
        return result

    def _library_registered(self, name: str, call: object, module: ModuleSummary) -> Entity | None:
        """The class `REGISTRY.get("key")` names, `REGISTRY` a registry object of the project (`registries.
        library_registrations`); None for any other call, a key not constant or filed under several."""
        table, _, method = name.rpartition(".")
        found = self.find(table) if method == "get" and isinstance(call, ast.Call) and len(call.args) == 1 else None
        if found is None or found[1] not in found[0].variables or self.index is None:
            return None
        made = found[0].variable(found[1])
        maker = self.resolve(made.callee, found[0]) if isinstance(made, Called) else None
        key = call.args[0].value if isinstance(call.args[0], ast.Constant) else None
        if not (isinstance(maker, Entity) and is_registry(self, maker.name)) or key is None:
            return None
        filed = [qualified for qualified, filed_as in library_registrations(self, table) if filed_as == key]
        return Entity(filed[0]) if len(filed) == 1 else None

    def _record(self, cls: ClassSummary, call: object, module: ModuleSummary) -> Tuple | None:
        """A dataclass or `NamedTuple` of another module built by `call` (of `module`): its fields' values by
        name, as `values` reads a record of the file itself (`TaggerOutput(scores=torch.sigmoid(z))`)."""
        home, node = cls.definition()
        fields = built_record(home, node, call) if home is not None and isinstance(call, ast.Call) else None
        ctx = self.ctx if module is self.own else self.index.context(module.name) if self.index is not None else None
        if fields is None or ctx is None:
            return None
        values = ctx.analysis(ValueKinds)
        return Tuple(tuple(values.value(v) for v in fields.values()), module, tuple(fields))

    def _reassigned(self, qualified: str, defining: ClassSummary, depth: int) -> frozenset[str] | None:
        """The `self.` attributes the project classes from `qualified` down to its base `defining` (not
        included) assign in their methods: writes a method `defining` runs for them may not see; None when
        `defining` is no base of it."""
        found = self.class_summary(qualified)
        if found is not None and found[1] is defining:
            return frozenset()
        if found is None or depth > MAX_DEPTH:
            return None
        between = [b for base in found[1].bases if (b := self._reassigned(base, defining, depth + 1)) is not None]
        return found[1].assigns.union(*between) if between else None

    def _sequence_call(self, callee: Instance, value: Called, depth: int) -> Resolved | None:
        """Calling an instance of an `nn.Sequential` subclass of the project without a `forward`: what the
        last layer its `__init__` hands `super().__init__` outputs (a project base's, when it hands none)."""
        for owner, cls in self._lineage(callee.cls):
            last = cls.passed_to_base
            if last is not None:
                found = self.resolve(last, owner, depth + 1)
                return dataclasses.replace(found, layer=False) if isinstance(found, Found) and found.layer else None  # made where the layer is
        return None

    def derives_from(self, qualified: str, library_class: str) -> bool:
        """Does the project class derive from `library_class` (`torch.nn.Sequential`), through project bases?"""
        return any(base == library_class for _, cls in self._lineage(qualified) for base in cls.bases)

    def library_base(self, qualified: str, classes) -> str | None:
        """The one library class among `classes` (a mapping by qualified name, such as the losses) the project
        class derives from when neither it nor a project base between defines `forward` (a loss subclass
        that only configures `__init__`: `super().__init__(label_smoothing=0.1)`); None otherwise."""
        lineage = self._lineage(qualified)
        if not lineage or any(cls.has_forward for _, cls in lineage):
            return None
        found = {canonical for _, cls in lineage for base in cls.bases if (canonical := canonical_class(base)) in classes}
        return found.pop() if len(found) == 1 else None

    def _lineage(self, qualified: str) -> list[tuple[ModuleSummary, ClassSummary]]:
        """The project class and its project bases, depth first (at most `MAX_DEPTH` deep)."""
        found, pending = [], [(qualified, 0)]
        while pending:
            name, depth = pending.pop(0)
            summary = self.class_summary(name) if depth <= MAX_DEPTH else None
            if summary is not None and summary not in found:
                found.append(summary)
                pending += [(base, depth + 1) for base in summary[1].bases]
        return found

    def _attribute_call(self, callee: Instance, value: Called, depth: int) -> Resolved | None:
        """Calling a layer an instance keeps (`model.head(h)`, `apply_head(model.head, h)`): what the layer its
        class assigns to `self.head` outputs; None for a method or an attribute not known."""
        found = self.class_summary(callee.cls) if callee.method not in (None, "forward") else None
        held = found[1].attribute(callee.method) if found is not None else None
        return self._call(Called(held, value.node), found[0], depth + 1) if held is not None else None

    def _applied(self, function: ast.AST | None, call: object, module: ModuleSummary, depth: int, made: tuple = (None, None)) -> Resolved | None:
        """What `function` returns under `call` (of `module`) when each of its returns calls a parameter it never
        rebinds (`return layer(x)` in `def forward(self, x, layer)`, or `out = layer(x)` once, `return out`), or
        a layer `__init__` keeps from its parameter (`self.layer = layer`, `return self.layer(self.drop(x))`)
        as the instance's construction in `module` passes it (`made`: the class, the construction): what
        calling the argument passed for it returns, when those agree; None otherwise (also when a return does
        more with the call)."""
        returned = function_returns(function) if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) else None
        ctx = self.ctx if module is self.own else self.index.context(module.name) if self.index is not None else None
        if not returned or not isinstance(call, ast.Call) or ctx is None:
            return None
        first = [*function.args.posonlyargs, *function.args.args][:1]
        bound = bind_arguments(call, function, skips_first=bool(first) and first[0].arg in ("self", "cls"))
        cls, site = made
        kept = _kept_parameters(cls) if isinstance(site, ast.Call) and ctx.scopes.parent(site) is not None else {}
        given = bind_arguments(site, own_method(cls, "__init__", ast.FunctionDef), skips_first=True) if kept else {}
        stored = [n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
        once = {a.targets[0].id: a.value for a in ast.walk(function) if _assigns_name(a) and stored.count(a.targets[0].id) == 1}
        found = []
        for expr in returned:
            expr = once.get(expr.id, expr) if isinstance(expr, ast.Name) else expr  # `out = layer(h)`; `return out`
            func = expr.func if isinstance(expr, ast.Call) else None
            if isinstance(func, ast.Name) and bound.get(func.id) is not None and func.id not in stored:
                passed = bound[func.id]
            elif is_self_attribute(func) and given.get(kept.get(func.attr)) is not None:
                passed = given[kept[func.attr]]
            else:
                return None
            found.append(self._call(Called(ctx.analysis(ValueKinds).value(passed), call), module, depth + 1))
        return _agreed(found)

    def _built_from_table(self, value: Called, module: ModuleSummary, depth: int) -> Resolved | None:
        """What calling an object built from a table entry returns (`MODELS[args.arch](n)(x)`), when the key
        leaves several entries: known when what each of them returns agrees."""
        made = value.callee
        filed = self._registered(made.callee, module, depth) if isinstance(made, Called) and isinstance(made.callee, Item | Selected) else None
        if not filed or len(filed) < 2:
            return None
        return _agreed([self._call(Called(Called(Ref(name), made.node), value.node, value.decide), module, depth + 1) for name in filed])

    def registered(self, item: Value | None) -> list[str] | None:
        """`_registered` of an item of a table the linted file reads (`MODELS["resnet"]`), else None."""
        return self._registered(item, self.own, 0) if isinstance(item, Item | Selected) else None

    def _registered(self, item: Item | Selected, module: ModuleSummary, depth: int) -> list[str] | None:
        """The classes and functions of the project that `item`, an item of a module-level table that starts
        empty (`MODELS = {}`), may be: those a registering decorator files in it under the item's key
        (`registries.registrations`), all of them for a key not known; None when the table is no such one."""
        table = self.resolve(item.value, module, depth + 1)
        filed = self._table(table.name) if isinstance(table, Entity) else None
        if filed is None:
            return None
        key = item.index if isinstance(item, Item) and isinstance(item.index, int | str) else None
        return [name for name, filed_as in filed if key is None or filed_as is None or filed_as == key] or None

    def _table(self, qualified: str) -> list[tuple[str, object]] | None:
        """(qualified name, key) of each definition the decorators of a table's module file in it, when the
        table is a module-level `{}` bound once; None otherwise. Worked out once per table."""
        if qualified not in self._tables:
            found = self.find(qualified)
            ctx = None if found is None else self.ctx if found[0] is self.own else self.index.context(found[0].name) if self.index else None
            values = [] if ctx is None else [v for n in ctx.tree.body if isinstance(n, ast.Assign) for v in _assigned_to(n, found[1])]
            empty = len(values) == 1 and isinstance(values[0], ast.Dict) and not values[0].keys
            if len(values) == 1 and not empty and ctx is not self.ctx:  # `DECODERS = {"dot": DotDecoder}` imported
                stored = any(isinstance(n.ctx, ast.Store) and self.ctx.qualified_name(n.value) == qualified for n in self.ctx.index.of_type(ast.Subscript))
                self._tables[qualified] = None if stored else _literal_table(ctx, values[0], found[1])
                return self._tables[qualified]
            stores = [(ctx, n) for n in ctx.index.of_type(ast.Subscript) if isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)] if empty else []
            stores += applied_stores(ctx, self) if empty else []
            filed = [
                (filed_name(r.home, r.definition), r.key) for home, s in stores for r in registrations(home, self, s) or ()
                if (home is ctx and s.value.id == found[1] if r.table is None else r.home.qualified_name(r.table) == qualified)
            ]  # fmt: skip
            self._tables[qualified] = filed or None
        return self._tables[qualified]

    def _plain_instance(self, value: Called, module: ModuleSummary, depth: int) -> Instance | None:
        """An object a class of the project builds that is no module (`EnsembleTrainer(...)`), for its methods."""
        callee = self.resolve(value.callee, module, depth + 1)
        found = self.find(callee.name) if isinstance(callee, Entity) else None
        return Instance(f"{found[0].name}.{found[1]}", value.node) if found is not None and found[1] in found[0].classes else None

    def _forwarded(self, call: ast.AST, module: ModuleSummary) -> bool:
        """Does `call` of `module` splat only the `**kwargs` of the function around it (`build(d, **kw)` in
        `def __init__(self, d, **kw)`): what its own callers pass, not known here?"""
        splats = [k.value for k in getattr(call, "keywords", ()) if k.arg is None]
        ctx = self.ctx if module is self.own else self.index.context(module.name) if self.index is not None else None
        function = ctx.scopes.enclosing_function(call) if splats and ctx is not None else None
        kwarg = function.args.kwarg.arg if function is not None and function.args.kwarg is not None else None
        return kwarg is not None and all(isinstance(s, ast.Name) and s.id == kwarg for s in splats)

    def _class_node(self, cls: str) -> ast.ClassDef | None:
        """A project class's definition, as its module defines it."""
        found = self.class_summary(cls)
        return found[1].definition()[1] if found is not None else None

    def _definition(self, cls: str, method: str) -> ast.AST | None:
        """The method of a project class, as its module defines it."""
        node = self._class_node(cls)
        return own_method(node, method, ast.FunctionDef) if node is not None else None

    def line_of(self, module: ModuleSummary, line: int) -> tuple[str, int]:
        """A module's line as a message shows it: (its file, the line); in a notebook, in its cell."""
        path = self.display(module)
        ctx = self.index.context(module.name) if self.index is not None and is_notebook(module.path) else None
        if ctx is None or ctx.notebook is None:
            return path, line
        cell, position = ctx.notebook.cell_position(Position(line, 1))
        return f"{path}:cell {cell}", position.line

    def display(self, module: ModuleSummary) -> str:
        """A module's file as a finding shows it ("" for the linted file itself)."""
        return "" if module is self.own else self.display_path(module.path)

    def display_path(self, path: str) -> str:
        """A file as a finding shows it: relative to the linted file's directory when below it, else to the
        working directory when below it. Worked out once per file (asked for each binding made)."""
        if path not in self._displayed:
            here = os.path.dirname(self.ctx.absolute_path)
            shown = (r for r in (os.path.relpath(path, here), os.path.relpath(path)) if not r.startswith(".."))
            self._displayed[path] = next(shown, path)
        return self._displayed[path]


def defines_module(cls: ast.ClassDef) -> bool:
    """Does a class have a `module` of its own, so that `x.module` is not the model a wrapper holds: it writes
    `self.module` (an EMA's copy), defines a `module` method or property, or registers a submodule so named?"""
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and node.attr == "module" and isinstance(node.ctx, ast.Store):
            return True
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "module":
            return True
        named = node.args[0] if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("add_module", "register_module") and node.args else None
        if isinstance(named, ast.Constant) and named.value == "module":
            return True
    return False


def _literal_table(ctx, literal: ast.AST, name: str) -> list[tuple[str, object]] | None:
    """(qualified name, key) of each class or function a module-level dict literal of another module files
    under a constant key (`DECODERS = {"dot": DotDecoder, "mlp": MLPDecoder}`), when every entry is one and
    nothing else writes to the table; None otherwise."""
    if not isinstance(literal, ast.Dict) or not literal.keys or ctx.module is None:
        return None
    written = any(
        isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name) and n.value.id == name
        for n in ctx.index.of_type(ast.Subscript)
    )  # fmt: skip
    own = {s.name for s in ctx.tree.body if isinstance(s, ast.ClassDef | ast.FunctionDef)}
    filed = []
    for key, value in zip(literal.keys, literal.values):
        target = ctx.qualified_name(value) if isinstance(value, ast.Name | ast.Attribute) else None
        if target is None and isinstance(value, ast.Name) and value.id in own:
            target = f"{ctx.module.name}.{value.id}"
        if written or not isinstance(key, ast.Constant) or target is None:
            return None
        filed.append((target, key.value))
    return filed


def _assigned_to(assign: ast.Assign, name: str) -> list[ast.AST]:
    """What an assignment binds `name` to: `x = v`, and `a, x = u, v` item by item."""
    found = []
    for target in assign.targets:
        if isinstance(target, ast.Name) and target.id == name:
            found.append(assign.value)
        elif isinstance(target, ast.Tuple) and isinstance(assign.value, ast.Tuple) and len(target.elts) == len(assign.value.elts):
            found += [v for t, v in zip(target.elts, assign.value.elts) if isinstance(t, ast.Name) and t.id == name]
    return found


def find_definition(summary_of, qualified: str, depth: int = 0) -> tuple[ModuleSummary, str] | None:
    """The module summary that defines `qualified`, following re-exports, and the name there
    (`summary_of`: module name -> its summary or None)."""
    if depth > MAX_DEPTH or "." not in qualified:
        return None
    module, _, member = qualified.rpartition(".")
    summary = summary_of(module)
    if summary is None:
        return None
    if member in summary.classes or member in summary.functions or member in summary.variables:
        return summary, member
    target = summary.imports.get(member)
    return find_definition(summary_of, target, depth + 1) if target and target != qualified else None


def _as_called(found: Resolved | None, function: ast.AST | None, call: object, forwarded: bool = False) -> Resolved | None:
    """A layer whose class a parameter's default of `function` chose (`values.Made.defaulted`), as `call`
    builds it: unknown when the call passes that parameter (or may), the default's else. A call that splats
    only its own function's `**kwargs` (`forwarded`) leaves the question to that function's callers."""
    if not isinstance(found, Found) or not found.defaulted:
        return found
    if function is None or not isinstance(call, ast.Call):
        return None
    first = [*function.args.posonlyargs, *function.args.args][:1]
    skips = bool(first) and first[0].arg in ("self", "cls")
    if forwarded:  # the defaults stand unless the outer callers pass them by keyword
        named = ast.Call(func=call.func, args=call.args, keywords=[k for k in call.keywords if k.arg is not None])
        return None if any(name in bind_arguments(named, function, skips_first=skips) for name in found.defaulted) else found
    bound = bind_arguments(call, function, skips_first=skips)
    passed = {k.arg for k in call.keywords}
    if any(name in bound or name in passed for name in found.defaulted) or None in passed:
        return None
    return dataclasses.replace(found, defaulted=())


def _kept_parameters(cls: ast.ClassDef | None) -> dict[str, str]:
    """The attributes the class's methods set once, in its `__init__`, each to one of its parameters it never
    rebinds (`self.layer = layer`): attribute -> parameter."""
    init = own_method(cls, "__init__", ast.FunctionDef) if cls is not None else None
    if init is None:
        return {}
    names = {a.arg for a in [*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs]}
    stored = [n.id for n in ast.walk(init) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    kept: dict[str, list[str | None]] = {}
    for node in ast.walk(cls):
        for target in node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign | ast.AugAssign) else []:
            if is_self_attribute(target):
                value = node.value if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
                in_init = value is not None and init.lineno <= node.lineno <= (init.end_lineno or init.lineno)
                parameter = value.id if in_init and isinstance(value, ast.Name) and value.id in names and value.id not in stored else None
                kept.setdefault(target.attr, []).append(parameter)
    return {attr: found[0] for attr, found in kept.items() if len(found) == 1 and found[0] is not None}


def _assigns_name(node: ast.AST) -> bool:
    """Is `node` an assignment of one value to one name (`out = layer(h)`)?"""
    return isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)


def _of_own_attribute(made: object) -> bool:
    """Is `made` an activation of an attribute of `self` (`torch.sigmoid(self.p_logit)`, `self.w.sigmoid()`)?"""
    if not isinstance(made, ast.Call):
        return False
    operand = made.args[0] if made.args else made.func.value if isinstance(made.func, ast.Attribute) else None
    return operand is not None and is_self_attribute(operand)


def _agreed(resolved: list[Resolved | None]) -> Resolved | None:
    """The value all paths agree on (same kind, or same class), else None: unknown stays unknown."""
    if not resolved or any(r is None for r in resolved):
        return None
    first = resolved[0]
    if all(isinstance(r, Tuple) and len(r.values) == len(first.values) and r.keys == first.keys for r in resolved):  # element by element
        options = zip(*(((v, r.module) for v in r.values) for r in resolved))
        return Tuple(tuple(_Either(tuple(o)) for o in options), first.module, first.keys)
    if isinstance(first, Found):
        same = all(isinstance(r, Found) and (r.kind, r.layer) == (first.kind, first.layer) for r in resolved)
        if same and any(r.mixture or r.complement for r in resolved):  # one path combines or complements them: so may the result
            last = [r for r in resolved if r.complement][-1:] or resolved[-1:]
            return dataclasses.replace(last[0], mixture=any(r.mixture for r in resolved), padded=any(r.padded for r in resolved))
    else:
        same = all(r == first for r in resolved)
    return resolved[-1] if same else None


def _placed_line(made: Made) -> int:
    """Where a layer's kind is made: its activation's line, or, for an activation built on its own and
    listed by name in a container (`nn.Sequential(self.fc, self.softmax)` in `forward`), the container's."""
    return made.node.lineno if made.listed_apart else (made.activation or made.node).lineno


def _combined(parts: list[Resolved | None]) -> Found | None:
    """A linear combination of probabilities (softmax or sigmoid output, with one-hot rows) stays one; of
    raw logits (`logits / temperature`), raw logits: not normalised by a scale."""
    if any(not isinstance(part, Found) or part.layer for part in parts):
        return None
    kinds = {part.kind for part in parts} - {Kind.ONE_HOT}
    if kinds not in ({Kind.PROBABILITIES}, {Kind.SIGMOID}, {Kind.LOGITS}):
        return None
    first = next(part for part in parts if part.kind in kinds)
    return dataclasses.replace(first, mixture=True, padded=any(part.padded for part in parts))



_BY_BASE: WeakKeyDictionary = WeakKeyDictionary()  # module summary -> {a base's last name: the classes naming it}


def _classes_by_base(summary: ModuleSummary) -> dict[str, list[ClassSummary]]:
    """A module's classes by the last part of each base's name (`_names` matches no other), indexed once:
    `subclasses` asked for each class of a module read every class of it."""
    if summary not in _BY_BASE:
        found: dict[str, list[ClassSummary]] = {}
        for cls in summary.classes.values():
            for base in dict.fromkeys(b.rpartition(".")[2] for b in cls.bases):
                found.setdefault(base, []).append(cls)
        _BY_BASE[summary] = found
    return _BY_BASE[summary]
