import ast

from mllint.analysis.facets.leakage import RETURNED, Leakage
from mllint.findings import Severity
from mllint.rule import Rule
from mllint.source import one_line


class StatisticsBeforeSplit(Rule):
    """
    ## What it does
    Reports statistics fitted on a whole data set that is split into training and evaluation parts
    afterwards, in the same function or script: a scikit-learn transformer (`StandardScaler`, `PCA`,
    `SimpleImputer`...) fitted with `fit` / `fit_transform`, or a normalisation written out
    (`X = (X - X.mean(0)) / X.std(0)`), followed by `train_test_split`, `cross_val_score` (and the other
    cross-validation helpers), `torch.utils.data.random_split`, a splitter's `.split(X)`, or slicing
    into two parts (`X[:n]` and `X[n:]`; pandas' `X.head(n)` and `X.tail(k)`), a mask and its complement (`X[mask]`, `X[~mask]`), opposite
    comparisons (`df[df.date < cut]`, `df.loc[df.date >= cut]`, `df.query("year >= 2022")`) or values
    (`df[df.split == "train"]`, `df[df.split == "test"]`) held as parts named for training and evaluation or
    returned by a splitting helper (a mask whose name says a part, `X[is_train]` and `X[~is_train]`, is a split
    wherever they go), of that data or of anything computed from it. The data it converts or that
    converts it is the same data (`full = torch.as_tensor(spectra)`: statistics of `full`, then a split of
    `spectra`; `torch.from_numpy`, `np.asarray`, `.numpy()`, `.values`; a conversion of a part,
    `torch.as_tensor(x[:n])`, is other data), and so are columns named by a list of labels (`df[NUMERIC]` with
    `NUMERIC = ["age", "fare"]`). A statistic is a reduction across the rows (`X.mean(0)`, `x.mean((0, 2, 3))`,
    no axis), not one within each sample (`imgs.mean(1, keepdim=True)`, `x.std(dim=-1)`) unless a reshape moved
    the rows, nor the largest id plus one (`int(y.max()) + 1`: a class count or a vocabulary size), nor a bound that only
    selects rows (`cut = df.day.max() - gap` then `df[df.day < cut]`, a percentile filter): it defines a split
    or a filter, it scales nothing; nor an extreme the values are only shifted by (`df.ts - df.ts.min()`,
    `(t_end - df.ts) / 86400`: a time origin). Statistics
    of the training part only (`scaler.fit(X_train)`, also in a loader that returns the
    parts of its own split), and transformers inside a `Pipeline` handed to
    `cross_val_score` or `GridSearchCV`, are fine and not reported.

    The fit and the split need not sit together: a helper of the project that normalises its argument,
    returns its mean and std or divides it (`X = normalize(X)`, `train, test = divide(X)`, in this module
    or another), a scaler fitted on `self.data` in one method of a class and `self.data` split in another,
    and a slice chosen by the split's flag (`if flag == "train": self.data = data[:n]` with `data[n:]` on
    the other arm) count as well, and so do a head and a tail of a bound and one offset from it,
    overlapping or not (`series[:cut]` and `series[cut - self.window:]` returned by `divide`, or kept
    together: `self.parts = (x[:cut], x[cut - w:])`), a head and a tail of different bounds when assignments or dict
    keys name both parts (`train = X[:n_train]`, `{"test": idx[:n_te], "train": idx[n_te + n_va:]}`, also each
    handed to a constructor: `{"train": Windows(values[:a]), "val": Windows(values[a - w:b])}`), a
    slice whose bounds one flag picks from lists of bounds (`data[border1s[set_type]:border2s[set_type]]`),
    statistics a helper returns (of its argument or of a reshaped view of it: `flat = x.transpose(0,
    1).flatten(1)`, `torch.flatten(x, 1)`) that a later call or `return` hands on with the data to a helper that
    splits it (`stats = compute_stats(X)`, `return make_splits(X, y, stats)`), and attributes set
    through tuples (`self.X, self.y = X, y`). So do a project function that returns data of its own it
    fitted on as a whole (`series = load_series()`, `return minmax(raw)`), a dataset class of the project
    whose `__init__` keeps statistics of what it is given for its other methods (`self.mean =
    x.mean(0)` read by `__getitem__`) constructed before `random_split`, and pipelines and column
    transformers (`make_pipeline(SimpleImputer(), StandardScaler())`, `ColumnTransformer`). A split of a
    dataset built in place counts as a split of what it holds (`random_split(TensorDataset(x, y), ...)`). A method
    that returns data it fitted, split after its own class calls it (`self.X = self.read_data(path)`,
    then `self.divide()`), is reported at its fit, where the statistics are computed; so is a method
    fitting its argument that its class calls before splitting the result (`reduced =
    self._project(X)`, then `holdout(reduced, y)`), and a fit of data a function returns unchanged
    (`self.scaler.fit(X)`, `return X, y`). Parts of split indices count as a split of the data they
    index (`te, tr = idx[:n], idx[n:]` or `parts = np.split(idx, [a, b])`, then `X[tr]`, `[X[p] for p
    in parts]`, also parts a project helper returns: `tr, va = split_indices(n)` returning `perm[k:],
    perm[:k]`; not minibatches by a count, `np.array_split(idx, n_batches)`), and so do bounds a flag
    picks from a table of pairs (`lo, hi = borders[flag]` with `borders = {"train": (0, n), ...}`).

    A function of the module that takes rows of the fitted data by its parameter (`def tensors(ix): return
    X_num[ix], y[ix]`), or hands it to one that does (`def as_dataset(ix): xs, ys = take(ix)`), splits it when calls
    fill that parameter with parts of split indices (`tensors(tr_idx)`).

    ## Why is this bad?
    The evaluation rows took part in the statistics the training data is transformed with: their mean,
    spread, components or imputed values leak into training, and the reported score is better than
    what the model will do on new data. Nothing fails.

    ## Example
    ```python
    import numpy as np
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = np.random.rand(100, 3), np.random.rand(100)
    X = StandardScaler().fit_transform(X)
    X_train, X_test, y_train, y_test = train_test_split(X, y)
    ```

    ## Use instead
    ```python
    import numpy as np
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = np.random.rand(100, 3), np.random.rand(100)
    X_train, X_test, y_train, y_test = train_test_split(X, y)
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    ```

    ## Fix safety
    There is no fix: the split has to move before the statistics, which may reorder much of the code.
    """

    code = "ML805"
    name = "statistics-before-split"
    message = "`{fit}`{inside} computes statistics of {data} before it is split (line {line}): the evaluation part leaks into training; split first and fit on the training part"
    severity = Severity.ERROR
    requires_any_text = ("(",)  # a finding stands at a call: the statistic, or the helper that computes it

    def visit_Call(self, node: ast.Call) -> None:
        found = self.ctx.analysis(Leakage).fitted_before_split(node)
        if found is not None:
            data, split = found
            inside = self.ctx.analysis(Leakage).fitted_inside(node)
            inside = f" ({inside})" if inside else ""
            data = "the data it returns" if data == RETURNED else f"`{data}`"
            self.report(node, self.message.format(fit=one_line(self.ctx.text(node), 50), inside=inside, data=data, line=split.lineno))
