from mllint.engine import Event
from mllint.findings import Severity
from mllint.rule import Rule


class InternalError(Rule):
    """
    ## What it does
    Reports a rule that crashed on a file. The other rules and files are still checked, and mllint exits
    with status 2 at the end.

    ## Why is this bad?
    It is a bug in mllint, not in your code: the crashed rule did not check the rest of that file.
    Please report it with the message, the traceback that `--verbose` prints and, if you can, the file.
    The finding sits on the code the rule was checking when it crashed (at the file's start when that
    is not known).

    ## Example
    A rule that raises an exception on an unusual construct.

    ## Use instead
    Nothing to change in your code; `--ignore` the named rule until it is fixed.

    ## Fix safety
    There is no fix.
    """

    code = "ML009"
    name = "internal-error"
    message = "internal error"
    severity = Severity.ERROR
    event = Event.INTERNAL_ERROR
    mandatory = True
    tool_failure = True
