from mllint.engine import Event
from mllint.findings import Applicability
from mllint.rule import Rule


class UnusedNoqa(Rule):
    """
    ## What it does
    Reports mllint codes in a `# noqa:` comment that silence nothing on their line.

    ## Why is this bad?
    A stale suppression hides the next real finding on that line, and tells readers about a problem that
    is no longer there. Only enabled mllint codes are checked: other tools' codes (`F401`) and a bare
    `# noqa` are left alone.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(4, 2)
    model.eval()  # noqa: ML301
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Linear(4, 2)
    model.eval()
    ```

    ## Fix safety
    The fix removes the unused codes, or the whole comment when no code is left; it is safe.
    """

    code = "ML003"
    name = "unused-noqa"
    message = "unused `noqa` directive"
    event = Event.UNUSED_NOQA
    fix_applicability = Applicability.SAFE
