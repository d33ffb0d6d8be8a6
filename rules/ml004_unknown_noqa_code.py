from mllint.engine import Event
from mllint.rule import Rule


class UnknownNoqaCode(Rule):
    """
    ## What it does
    Reports `ML` codes in a `# noqa:` comment that name no mllint rule.

    ## Why is this bad?
    A mistyped code silences nothing, so the finding it was meant for is still reported, or the comment
    was meant for a rule that no longer exists.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(4, 2)
    model.eval()  # noqa: ML999
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Linear(4, 2)
    model.eval()
    ```

    ## Fix safety
    There is no fix: mllint cannot know which code was meant.
    """

    code = "ML004"
    name = "unknown-noqa-code"
    message = "unknown rule code in `noqa`"
    event = Event.UNKNOWN_NOQA_CODE
