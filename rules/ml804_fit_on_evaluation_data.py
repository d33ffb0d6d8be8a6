import ast
import re

from mllint.analysis.values.values import ValueKinds
from mllint.findings import Severity
from mllint.rule import Rule

FITTING_METHODS = frozenset({"fit", "fit_transform", "partial_fit"})
EVALUATION_WORDS = frozenset({"test", "val", "valid", "validation", "dev", "eval", "holdout"})


class FitOnEvaluationData(Rule):
    """
    ## What it does
    Reports a scikit-learn transformer (a scaler, encoder, PCA, vectorizer... constructed from
    `sklearn.*` in the same file) fitted on data whose name says it is test or validation data:
    `scaler.fit(X_test)`, `encoder.fit_transform(val_features)`.

    ## Why is this bad?
    Statistics of the evaluation set leak into the features the model is judged on: the reported score
    is better than what the model will do on new data, and nothing fails. Fit on the training data and
    only `transform` the rest.

    ## Example
    ```python
    import numpy as np
    from sklearn.preprocessing import StandardScaler

    X_train, X_test = np.random.rand(80, 3), np.random.rand(20, 3)
    scaler = StandardScaler()
    X_train = scaler.fit_transform(X_train)
    X_test = scaler.fit_transform(X_test)
    ```

    ## Use instead
    ```python
    import numpy as np
    from sklearn.preprocessing import StandardScaler

    X_train, X_test = np.random.rand(80, 3), np.random.rand(20, 3)
    scaler = StandardScaler()
    X_train = scaler.fit_transform(X_train)
    X_test = scaler.transform(X_test)
    ```

    ## Fix safety
    There is no fix: which data to fit on is for the author to decide.
    """

    code = "ML804"
    name = "fit-on-evaluation-data"
    message = "`{call}` fits on evaluation data: its statistics leak into the score; fit on training data and `transform` this"
    severity = Severity.ERROR
    requires_any_text = ("sklearn",)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr in FITTING_METHODS and node.args):
            return
        if not _names_evaluation_data(node.args[0]):
            return
        constructed = self.ctx.analysis(ValueKinds).constructed_class(func.value)
        if constructed is not None and constructed.startswith("sklearn."):
            self.report(node, self.message.format(call=f"{self.ctx.text(func)}({self.ctx.text(node.args[0])})"))


def _names_evaluation_data(node: ast.AST) -> bool:
    """`X_test`, `valData`, `df_val["x"]`, `splits.test`: the words of the name say evaluation data."""
    while isinstance(node, ast.Subscript):
        node = node.value
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    words = re.findall(r"[a-z]+|[A-Z][a-z]*", name)
    return any(word.lower() in EVALUATION_WORDS for word in words)
