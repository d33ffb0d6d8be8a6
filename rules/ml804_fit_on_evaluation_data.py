import ast

from mllint.analysis.facets.leakage import Leakage
from mllint.analysis.program.callers import call_sites
from mllint.analysis.program.project_view import place_in
from mllint.findings import Severity
from mllint.source import one_line
from mllint.rule import Rule


HELPER_MESSAGE = (
    "`{call}` hands evaluation data ({evidence}) to `{helper}`, which fits on it (`{fit}`, {place}): its statistics "
    "leak into the score; pass the object fitted on training data"
)

STATISTIC_MESSAGE = (
    "`{call}` computes statistics of evaluation data ({evidence}) that then transform it: they leak into the "
    "score; compute them on training data"
)


class FitOnEvaluationData(Rule):
    """
    ## What it does
    Reports a scikit-learn transformer (a scaler, encoder, PCA, vectorizer...) fitted on evaluation
    data. Evaluation data is data whose name says it is test or validation data (`scaler.fit(X_test)`,
    `encoder.fit_transform(val_features)`, `scaler.fit_transform(test_df[cols].values)`), an item read by a literal split key (`splits["val"]`, `data.get("test")`), a concatenation that holds such data
    (`scaler.fit(pd.concat([train_df, test_df]))`, `np.r_[X_tr, X_val]`, cleaned on the way: `full[cols].fillna(0)`), each split of a loop over literal split names with
    the fit under no test of the split (`for name in ["train", "val", "test"]: scaler.fit_transform(...)`),
    each item of a loop over literals with evaluation data among them (`for name, df in (("train", tr),
    ("test", te)):`, `zip` of literals), what a project function gives back of such data (`impute(X_test)`),
    or a parameter that a call site fills with such data while its constant flags make the fit run
    (`prepare(X_val, fit=True)` for `if fit: self.scaler.fit(X)`, a dataset class whose `__init__` fits on
    what `Scaled(X_va, y_va)` gives it; short names count: `X_te`, `y_va`), or the held-out part of a split, whatever
    its name: rows taken by the second index of each fold a splitter yields (`X[b]` in `for a, b in
    kf.split(X):`, `df.iloc[idx]`), by an odd item of `train_test_split`'s results, or where a fold column equals
    the fold (`df[df.kfold == k]`). The transformer may be built anywhere
    the objects layer follows: a builder's tuple, a dict of encoders, a setter, an argument. A decomposition
    (PCA, truncated SVD) whose output only a figure shows (`plt.scatter(*coords.T)`, in a helper that draws,
    or given back to a call only drawn) is not reported: nothing of it reaches the score.

    When the fit sits in a project function or method the evaluation data is handed to (directly or
    through the functions it calls: `pre.fit_transform(val_df)` running its own `fit`, `preprocess(test_df)`
    whose `if scaler is None:` branch the call takes by leaving `scaler` out; `encode(val_df, coder, refit=True)`
    running `if refit: coder.fit(df)`, a method of the project class the call's `coder` is), the call that hands the data
    over is reported, with the helper's fit named: the helper is right for training data. So is a call naming
    an evaluation split to a helper that reads that split and fits on it (`load_split(root, "test")`, or each
    name of `for split in SPLITS:` with `SPLITS = ("train", "dev")`), and a call once per split of a dict with literal split keys to a
    helper fitting the object it is handed (`{k: make_windows(v, scaler) for k, v in splits.items()}`).

    Statistics across the rows of a whole evaluation set read from a file (`mu = test_df[cols].mean()`,
    `.std().replace(0, 1)`) that then transform it (`(test_df[cols] - mu) / sd`) are a fit by hand: the first
    of them is reported. Statistics of it only printed or compared are not.

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
    message = "`{call}` fits on evaluation data ({evidence}): its statistics leak into the score; fit on training data and `transform` this"
    severity = Severity.ERROR
    requires_any_text = ("fit", "test", "val", "eval", "holdout")

    def visit_Call(self, node: ast.Call) -> None:
        through = self.ctx.analysis(Leakage).fits_through_helper(node)
        if through is not None:
            evidence, helper, reach = through
            call = one_line(self.ctx.text(node), 60)
            place = place_in(self.ctx, reach.ctx, reach.node)
            self.report(node, HELPER_MESSAGE.format(call=call, evidence=evidence, helper=helper, fit=reach.ctx.text(reach.node.func), place=place))
            return
        found = self.ctx.analysis(Leakage).fitted_on_evaluation(node)
        if found:
            evidence, binding = found[0]
            call = one_line(self.ctx.text(node), 60)
            self.report(node, self.message.format(call=call, evidence=evidence), related=call_sites(binding))
            return
        evidence = self.ctx.analysis(Leakage).statistics_of_evaluation(node)
        if evidence is not None:
            self.report(node, STATISTIC_MESSAGE.format(call=one_line(self.ctx.text(node), 60), evidence=evidence))
