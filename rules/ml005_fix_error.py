from mllint.engine import Event
from mllint.findings import Severity
from mllint.rule import Rule


class FixError(Rule):
    """
    ## What it does
    Reports a file whose fixes were not written because applying them produced code that does not
    parse, or because the file changed on disk while mllint was fixing it.

    ## Why is this bad?
    It is a bug in mllint (or a race with another program), not in your code: mllint refuses to write a
    broken or stale file and leaves it exactly as it was. Please report it with the file's content.

    ## Example
    Two fixes that each keep the file valid but together do not.

    ## Use instead
    Apply the remaining fixes by hand, or run `mllint --fix` again once the file is no longer changing.

    ## Fix safety
    There is no fix.
    """

    code = "ML005"
    name = "fix-error"
    message = "fixes were not applied"
    severity = Severity.ERROR
    event = Event.FIX_ERROR
    mandatory = True
    tool_failure = True
