"""Fixtures: saved results of every kind, and Debian's Chromium driven by Playwright.

The browser is ``$ASSAY_CHROMIUM`` or ``/usr/bin/chromium`` (installed by ``make setup``
through scripts/ensure-chromium.sh); ``playwright install`` is never run. A missing browser
fails the browser tests with that hint (it is never a skip). Every page opened by
``open_report`` records console errors, uncaught exceptions and any request for a URL other
than ``file:``, ``data:``, ``blob:`` or ``about:`` (those are aborted), and the test's
teardown fails on any of them.

Screenshots go to ``$ASSAY_SCREENSHOTS`` or ``demo-output/screenshots/`` at the repository
root (git-ignored), for a person to look at.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import assay
from assay.uncertainty import Estimator

CHROMIUM = os.environ.get("ASSAY_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
ROOT = Path(__file__).resolve().parents[3]
LOCAL = ("file:", "data:", "blob:", "about:")


def screenshot_dir() -> Path:
    path = Path(os.environ.get("ASSAY_SCREENSHOTS", ROOT / "demo-output" / "screenshots"))
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def shot():
    """``shot(opened, name)``: a full-page screenshot into :func:`screenshot_dir` (``name.png``)."""
    def _shot(opened, name: str) -> Path:
        path = screenshot_dir() / f"{name}.png"
        opened.page.screenshot(path=str(path), full_page=True)
        return path

    return _shot


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright  # deferred: only the browser tests need it

    if not Path(CHROMIUM).is_file():
        pytest.fail(f"no browser at {CHROMIUM}: run scripts/ensure-chromium.sh (make setup does), or set "
                    "ASSAY_CHROMIUM to a Chromium binary")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield b
        b.close()


class Opened:
    """A report open in the browser, with what went wrong while it was."""

    def __init__(self, page, errors: list[str], requests: list[str]):
        self.page, self.errors, self.requests = page, errors, requests

    def cells(self, table: str) -> list[list[str]]:
        """The visible text of every body cell of table ``table`` (an id), row by row, in page order."""
        return self.page.eval_on_selector(
            f"#{table}", "t => Array.from(t.querySelectorAll('tbody > tr')).filter(r => !r.hidden)"
                         ".map(r => Array.from(r.cells).map(c => c.textContent))")

    def values(self, table: str) -> list[list[str | None]]:
        """The ``data-value`` of every body cell (None for text cells), row by row."""
        return self.page.eval_on_selector(
            f"#{table}", "t => Array.from(t.querySelectorAll('tbody > tr')).filter(r => !r.hidden)"
                         ".map(r => Array.from(r.cells).map(c => c.getAttribute('data-value')))")

    def table_id(self, title_start: str) -> str:
        ids = self.page.eval_on_selector_all(
            "section.table-section", "ss => ss.map(s => [s.querySelector('h2').textContent, "
                                     "s.querySelector('table').id])")
        found = [i for t, i in ids if t.startswith(title_start)]
        assert len(found) == 1, (title_start, ids)
        return found[0]


@pytest.fixture
def open_report(browser):
    opened: list[Opened] = []

    def _open(path: Path, *, width: int = 1400) -> Opened:
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        errors: list[str] = []
        requests: list[str] = []
        page.on("console", lambda m: errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(f"page error: {e}"))

        def route(r):
            if r.request.url.startswith(LOCAL):
                r.continue_()
            else:
                requests.append(r.request.url)
                r.abort()

        context.route("**/*", route)
        page.goto(Path(path).resolve().as_uri())
        page.wait_for_selector("body[data-ready='1']", timeout=30_000)
        o = Opened(page, errors, requests)
        opened.append(o)
        return o

    yield _open
    problems = [(o.errors, o.requests) for o in opened if o.errors or o.requests]
    for o in opened:
        o.page.context.close()
    assert not problems, f"console errors or requests that left the page: {problems}"


# --------------------------------------------------------------------------- saved results
PREDS_A = ["cat", "dog", "cat", "bird", "dog", "cat", "dog", "bird", "cat", "dog"] * 3
PREDS_B = ["cat", "dog", "dog", "bird", "dog", "bird", "dog", "bird", "dog", "dog"] * 3
REFS = ["cat", "dog", "cat", "bird", "cat", "cat", "dog", "bird", "dog", "dog"] * 3


@pytest.fixture
def evaluation_files(tmp_path) -> tuple[Path, Path]:
    """Two systems scored with accuracy and macro F1 (200 resamples), saved with ``EvaluationResults.save``."""
    paths = []
    for name, preds in (("system-a", PREDS_A), ("system-b", PREDS_B)):
        res = assay.evaluate(preds, REFS, metrics=["accuracy", "f1[average=macro]"], n_resamples=200, seed=1)
        paths.append(res.save(tmp_path / f"{name}.json"))
    return paths[0], paths[1]


@pytest.fixture
def comparison_file(tmp_path, evaluation_files) -> Path:
    a, b = (assay.metrics.api.load_results(p) for p in evaluation_files)
    comp = assay.compare(a, b, "accuracy", n_resamples=200, seed=3)
    path = tmp_path / "comparison.json"
    path.write_text(json.dumps(comp.to_dict()), encoding="utf-8")
    return path


@pytest.fixture
def parse_eval_files(tmp_path) -> tuple[Path, Path]:
    """Two documents in the layout of 'assay parse-eval --json' (scores and signature)."""
    out = []
    for name, correct in (("parser-1", (90, 85)), ("parser-2", (93, 80))):
        doc = {"scores": [{"metric": "uas", "label": "UAS", "value": correct[0] / 100, "correct": correct[0],
                           "total": 100, "sentences": 7},
                          {"metric": "las", "label": "LAS", "value": correct[1] / 100, "correct": correct[1],
                           "total": 100, "sentences": 7}],
               "signature": "evaluators:uas,las|format:conllu"}
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        out.append(path)
    return out[0], out[1]


class Column(Estimator):
    """An estimator that returns a stored column of the records (the test's own numbers)."""

    level, dependencies = "sequence", ("u",)

    def __init__(self, name: str, column: int):
        self.name = name
        self.column = column
        super().__init__()

    def __call__(self, stats):
        return np.asarray([u[self.column] for u in stats["u"]], dtype=float)


def manager_records(n: int, n_estimators: int, seed: int = 0) -> list[dict]:
    """``n`` records with a binary ``correct`` and ``n_estimators`` uncertainty columns in [0, 1]."""
    rng = np.random.default_rng(seed)
    correct = rng.integers(0, 2, n)
    return [{"id": str(i), "correct": int(correct[i]),
             "u": [float(np.clip((1 - correct[i]) * 0.3 * (k % 3) / 2 + rng.uniform(0, 0.7), 0, 1))
                   for k in range(n_estimators)]} for i in range(n)]


def make_manager(path: Path, *, n: int, n_estimators: int, ue_metrics=("prr", "roc_auc"), n_resamples: int = 0):
    man = assay.UEManager(manager_records(n, n_estimators), estimators=[Column(f"est{k}", k)
                                                                      for k in range(n_estimators)],
                          gen_metrics=["accuracy"], ue_metrics=list(ue_metrics), n_resamples=n_resamples, seed=0,
                          progress=False)
    man()
    man.save(path)
    return man


@pytest.fixture
def manager_dir(tmp_path) -> Path:
    """A saved UEManager: 3 estimators over 40 examples, PRR and ROC-AUC with 100-resample intervals."""
    path = tmp_path / "ue-run"
    make_manager(path, n=40, n_estimators=3, n_resamples=100)
    return path


def write_run(path: Path, *, models: int, seeds: int, unc_types: list[str], metric_names=("auroc", "aurc"),
              value=lambda model, seed, unc, metric: 0.0) -> Path:
    """A minimal 'assay run' output folder: a manifest and one result tree per version (task 'ood')."""
    versions = []
    for m in range(models):
        for s in range(seeds):
            out = f"model{m}/seed{s}"
            tree = {"mean": {unc: {"metrics": {name: value(m, s, unc, name) for name in metric_names}}
                             for unc in unc_types}}
            (path / out).mkdir(parents=True, exist_ok=True)
            (path / out / "ood.json").write_text(json.dumps(tree), encoding="utf-8")
            versions.append({"pred_model": f"model{m}", "params": {"seed": s}, "unc_types": unc_types,
                             "aggregations": [], "output_dir": out, "version_name": f"seed{s}"})
    manifest = {"versions": versions,
                "tasks": {"ood": {"file_name": "ood.json", "datasets": ["test"], "combine_splits": True,
                                  "metrics": [{"name": n, "higher_is_better": n != "aurc", "levels": ["unc_type"]}
                                              for n in metric_names]}},
                "signature": "tasks:ood|metrics:auroc,aurc"}
    (path / "assay-results.json").write_text(json.dumps(manifest), encoding="utf-8")
    return path


@pytest.fixture
def build():
    """The builders above, for tests that need other sizes (test modules cannot import conftest)."""
    import types

    return types.SimpleNamespace(manager=make_manager, run=write_run, records=manager_records)
