from mllint.engine import Event
from mllint.findings import Severity
from mllint.rule import Rule


class AnalysisCutShort(Rule):
    """
    ## What it does
    Reports a file whose analysis took longer than the per-file budget (`analysis-budget`, 30 seconds
    of CPU time unless configured): mllint stopped analysing it, reported what the rules had found until then, and
    went on with the other files. The finding names the line where the analysis stopped.

    ## Why is this bad?
    The rest of the file was not checked: bugs there are not reported. It is a limit of mllint, not a
    problem of your code; please report the file, so that the analysis that took so long is mended.

    ## Example
    A file whose analysis outlasts the budget, on a slow or very loaded machine, or a shape of code that
    an analysis follows too slowly.

    ## Use instead
    Raise the budget for such files (`analysis-budget = 120` in the configuration, or `--config
    "analysis-budget = 120"`; 0 means no limit), or exclude the file.

    ## Fix safety
    There is no fix.
    """

    code = "ML006"
    name = "analysis-cut-short"
    message = "the analysis of this file was cut short"
    severity = Severity.WARNING
    event = Event.CUT_SHORT
    mandatory = True
    tool_failure = True
