from mllint.engine import Event
from mllint.findings import Severity
from mllint.rule import Rule


class SyntaxError_(Rule):
    """
    ## What it does
    Reports a file that Python cannot parse, with the parser's message and position. Code written for
    Python before 3.7, whose only error is `async` or `await` used as a name (`.cuda(async=True)`,
    `args.async`), is still linted: its other findings are reported (without fixes) with this one.

    ## Why is this bad?
    The file cannot run, and mllint cannot check it.

    ## Example
    ```python
    def train(model:
        pass
    ```

    ## Use instead
    ```python
    def train(model):
        pass
    ```

    ## Fix safety
    There is no fix.
    """

    code = "ML002"
    name = "syntax-error"
    message = "syntax error"
    severity = Severity.ERROR
    event = Event.SYNTAX_ERROR
    mandatory = True
