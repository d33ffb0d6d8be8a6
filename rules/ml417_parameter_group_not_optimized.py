from mllint.analysis.facets.parameters import unused_parameter_groups
from mllint.findings import Severity
from mllint.rule import Rule


class ParameterGroupNotOptimized(Rule):
    """
    ## What it does
    Reports a parameter group (`{"params": model.head.parameters(), "lr": lr}`) that is built and then
    never read: a name bound to it that its scope never reads again (the group itself, or one unpacked
    from what a function of the project returns: `decay, no_decay = split_decay(model)`), or a group kept
    in a dict attribute (`self.groups = {"encoder": {...}, "projector": {...}}`) at a key the class never
    reads while it reads the others (`Adam([self.groups["encoder"]])`). Groups handed on (to an
    optimizer, to `add_param_group`, in a list, or read whole) are not reported.

    ## Why is this bad?
    An optimizer updates only the parameters it is given. A group written out with its own learning rate
    or weight decay and then left out of the optimizer's list means those parameters never train: the
    new classifier, the biases and norm weights of a `no_decay` group, the projection head stay at their
    initial values while the loss still goes down through the rest of the model.

    ## Example
    ```python
    import torch


    def build_optimizer(model, lr=1e-3):
        backbone = {"params": model.backbone.parameters(), "lr": lr * 0.1}
        head = {"params": model.head.parameters(), "lr": lr}
        return torch.optim.SGD([backbone], lr=lr)
    ```

    ## Use instead
    ```python
    import torch


    def build_optimizer(model, lr=1e-3):
        backbone = {"params": model.backbone.parameters(), "lr": lr * 0.1}
        head = {"params": model.head.parameters(), "lr": lr}
        return torch.optim.SGD([backbone, head], lr=lr)
    ```

    ## Fix safety
    There is no fix: whether the group was meant to train (add it to the optimizer) or is left over
    (delete it) is for the author to decide.
    """

    code = "ML417"
    name = "parameter-group-not-optimized"
    message = (
        "the parameter group `{name}` (`{params}`) is built but never given to an optimizer: "
        "those parameters never train"
    )
    severity = Severity.ERROR
    requires_any_text = ("params", "optim")

    def end_file(self) -> None:
        for group in unused_parameter_groups(self.ctx):
            self.report(group.node, self.message.format(name=group.name, params=group.params))
