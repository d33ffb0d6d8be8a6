from mllint.engine import Event
from mllint.findings import Severity
from mllint.rule import Rule


class UnreadableFile(Rule):
    """
    ## What it does
    Reports a file that cannot be read or decoded as Python source: a permission error, a file that
    vanished, bytes that are not valid in the file's encoding, or a NUL byte. For a Jupyter notebook:
    malformed notebook JSON, a format older than nbformat 4, or a kernel language other than Python.

    ## Why is this bad?
    mllint cannot check a file it cannot read, and neither can Python run it.

    ## Example
    A file saved as Latin-1 without an encoding cookie, containing `é` as the single byte 0xE9.

    ## Use instead
    Save the file as UTF-8, or declare its encoding with a `# -*- coding: latin-1 -*-` comment. Convert an
    old notebook with `jupyter nbconvert --to notebook --nbformat 4`; exclude the notebooks of other
    languages (`extend-exclude = ["analysis/*.ipynb"]`).

    ## Fix safety
    There is no fix.
    """

    code = "ML001"
    name = "unreadable-file"
    message = "cannot read file"
    severity = Severity.ERROR
    event = Event.UNREADABLE
    mandatory = True
    tool_failure = True
