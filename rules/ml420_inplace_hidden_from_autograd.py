from mllint.analysis.facets.hidden_changes import hidden_changes
from mllint.findings import Severity
from mllint.rule import Rule
from mllint.source import one_line


class InplaceHiddenFromAutograd(Rule):
    """
    ## What it does
    Reports an in-place change, in a module's `forward` (or a method it calls), made through `.data` or
    `.detach()` of a tensor the forward computed with a graph, when the forward reads that tensor again:
    `q.data.mul_(self.scale)` of a chunk of the `qkv` projection, `h.narrow(-1, 0, n).data.mul_(keep)` of
    a `tanh` output, `att.data *= s`, `out.detach().add_(bias)`, `h.data.clamp_(-c, c)`: arithmetic or
    clipping in place, also through views (slices, `narrow`, items of `chunk`/`split`). Parameters and buffers (`self.weight.data.mul_(...)`, a
    codebook's moving average), the forward's own arguments (ML401's), changes under `torch.no_grad()` or
    in evaluation-only branches (`if not self.training:`), what a straight-through estimator writes
    through `.data` on purpose (`round_`, `sign_`, `copy_`), and fills at masked places
    (`scores.data.masked_fill_(mask, -inf)` before a softmax, whose output there is 0 either way) are not
    reported. A fill or a store, though, into the output of an operation whose backward uses that output is
    reported: `probs.data[:, 0] = 0` or `probs.data.masked_fill_(pad, 0)` after a softmax, `g.detach().fill_(0)`
    of a sigmoid or `nn.Sigmoid()` output, `h.data[..., :n].zero_()` of a `tanh` output, when the forward reads
    it again.

    ## Why is this bad?
    `.data` and `.detach()` share the tensor's storage but not its autograd history. The forward goes on
    with the changed values, while the backward computes the gradient as if the change had not happened:
    the scaled query gets the gradient of the unscaled one, masked units get gradients computed from values
    they no longer hold (a `tanh` backward uses its changed output). No error is raised (unlike an in-place
    change autograd sees, ML406), the loss still goes down, and the model trains on a wrong gradient.

    ## Example
    ```python
    import torch
    from torch import nn


    class Attention(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.qkv = nn.Linear(dim, 3 * dim)
            self.scale = dim ** -0.5

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            q.data.mul_(self.scale)
            return (q @ k.transpose(-2, -1)).softmax(-1) @ v
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn


    class Attention(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.qkv = nn.Linear(dim, 3 * dim)
            self.scale = dim ** -0.5

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            q = q * self.scale
            return (q @ k.transpose(-2, -1)).softmax(-1) @ v
    ```

    ## Fix safety
    There is no fix: writing the change out of place (`q = q * self.scale`) changes the gradient the model
    trains with, which is the point, but whether a straight-through gradient was meant is for the author
    to decide.
    """

    code = "ML420"
    name = "inplace-hidden-from-autograd"
    message = (
        "`{change}` changes `{name}` in place through `{through}`, which autograd does not see: `{method}` goes "
        "on with the changed values (line {line}) but the gradient is computed as if they were unchanged; "
        "use an out-of-place operation"
    )
    saved_message = (
        "`{change}` fills `{name}` in place through `{through}`, which autograd does not see, but `{op}` (line "
        "{op_line}) saved it to compute its gradient: `{method}` goes on with the filled values (line {line}) "
        "and the gradient is computed from them; use an out-of-place operation (`masked_fill`, `torch.where`)"
    )
    severity = Severity.ERROR
    requires_any_text = (".data", ".detach()")

    def end_file(self) -> None:
        for found in hidden_changes(self.ctx):
            method = self.ctx.scopes.enclosing_function(found.change).name
            described = {
                "change": one_line(self.ctx.text(found.change), 60), "name": found.name.id, "method": method,
                "through": one_line(self.ctx.text(found.through), 40), "line": found.read.lineno,
            }  # fmt: skip
            if found.saved is None:
                message = self.message.format(**described)
            else:
                message = self.saved_message.format(**described, op=one_line(self.ctx.text(found.saved), 40), op_line=found.saved.lineno)
            self.report(found.change, message)
