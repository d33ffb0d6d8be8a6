
from mllint.analysis.facets.selection import Selections
from mllint.findings import Severity
from mllint.rule import Rule


class ModelSelectedOnTestSet(Rule):
    """
    ## What it does
    Reports a best epoch, checkpoint, early stop or reported maximum chosen by a score measured on the
    test data: a comparison with a best score (`if acc > best_acc:`, `is_best = loss < best_loss`,
    `best_acc = max(best_acc, acc)`) whose branch keeps a new best, saves a checkpoint or stops, where
    the score is named for the test set (`test_acc`), comes from an evaluation of data named test
    (`acc = evaluate(model, test_loader)`, `test_evaluator.evaluate()`, the evaluation written in the comparison or
    the early stopper's call itself: `stopper(evaluate(model, loaders["test"]), model)`, or a `ReduceLROnPlateau`
    scheduler's `step(test_loss)`), is computed in a test pass
    (`def test(epoch):`, a loop over `test_loader`), is compared under `phase == "test"`, or is measured
    by an evaluator or loader that a call site passes test data for (`Trainer(model, val_evaluator=
    test_evaluator)`, the trainer's `self.val_evaluator.evaluate()` or `val_evaluator(model)`). Test
    data is also what is built from a split read by its key or name, whatever the variable is called
    (`scorer = Evaluator(DataLoader(splits["test"]))` passed as `val_evaluator`, `held =
    loaders["test"]` then `evaluate(model, held)`), or named by a string its construction is given
    (`Evaluator(loader, "test")`, `split="test"`), along an evaluator, its loader and its dataset.
    Callbacks that monitor a test metric
    (`ModelCheckpoint(monitor="test_acc")`), an early stopper called with a test score
    (`early_stopping(test_loss, model)`, `stopper.step(test_loss, model)`, a method of an
    `EarlyStopping(...)` object) and a library trainer evaluated on a test set that keeps its
    best model (`eval_dataset=test_set` with `load_best_model_at_end=True`) count too, and so does the
    maximum or argmax of a collection of per-epoch test scores (`max(history["test_acc"])`,
    `np.argmax(test_f1s)`, over a list that evaluations of test data are appended to), the record a
    `min`/`max` ranks by a test score (`min(results, key=lambda r: r["test_loss"])`, `max(runs,
    key=itemgetter("test_acc"))`, `min(r["test_loss"] for r in results)`, `np.argmin([r["test_loss"] for r in runs])`, `sorted(runs,
    key=...)[0]`, a table's `df["test_acc"].idxmax()`; not by `val_loss` or `len`), and a comparison
    in a search over settings that trains (`for lr in lrs:` calling a project function that
    backpropagates), or in a callback's hook that a trainer runs once per epoch (`for cb in
    self.callbacks: cb.on_epoch_end(self)`, or `cb(model, score, epoch)` running its `__call__`, in its
    epoch loop, in any module); a hook comparing its parameter (`def __call__(self, model, score,
    epoch): if score > self.best:`) compares what the loop hands it, a test score by the loop's own
    evidence (`score = accuracy(model, loaders["test"])`). Selection on
    a validation score (`val_acc > best_val_acc`), with the test score only recorded beside it, and a
    single evaluation of the test set after training are not reported.

    ## Why is this bad?
    Choosing the epoch or checkpoint that scores best on the test set fits that choice to the test set:
    the reported score is the maximum of many noisy measurements, higher than what the chosen model
    will do on new data, and no data is left that measures it fairly. Nothing fails.

    ## Example
    ```python
    def fit(model, train_one_epoch, evaluate, loaders, epochs):
        best_acc = 0.0
        for epoch in range(epochs):
            train_one_epoch(model, loaders["train"])
            test_acc = evaluate(model, loaders["test"])
            if test_acc > best_acc:
                best_acc = test_acc
        return best_acc
    ```

    ## Use instead
    ```python
    def fit(model, train_one_epoch, evaluate, loaders, epochs):
        best_acc, test_at_best = 0.0, 0.0
        for epoch in range(epochs):
            train_one_epoch(model, loaders["train"])
            val_acc = evaluate(model, loaders["val"])
            if val_acc > best_acc:
                best_acc, test_at_best = val_acc, evaluate(model, loaders["test"])
        return test_at_best
    ```

    ## Fix safety
    There is no fix: a validation split has to be made and the selection moved to it.
    """

    code = "ML806"
    name = "model-selected-on-test-set"
    message = "`{score}` measures the test set ({evidence}) and chooses `{best}`: the model is selected on the test data and its reported score is optimistic; select on a validation split and test once"
    severity = Severity.WARNING
    requires_any_text = ("best", "max", "min", "top", "highest", "lowest", "stop", "monitor", "eval_dataset")

    def end_file(self) -> None:
        for found in self.ctx.analysis(Selections).on_test():
            message = self.message.format(score=self.ctx.text(found.score), evidence=found.evidence, best=self.ctx.text(found.best))
            self.report(found.score, message, related=found.related)
