"""The hooks an assay plugin implements: the plugin author's reference.

A plugin is any importable object (usually a module) with functions marked
``@assay.hookimpl``, advertised through an entry point in the group ``assay``::

    # pyproject.toml of your distribution
    [project.entry-points.assay]
    my_metrics = "my_metrics.plugin"

    # my_metrics/plugin.py
    from assay import hookimpl

    @hookimpl
    def assay_register_metrics(register):
        register("my_metric", MyMetric, description="What it measures")

Every hook follows the same register-callback style (metric namespaces too, see
:func:`assay_register_metric_namespaces`). ``register(name, factory,
**metadata)`` adds one entry to that kind's registry:

``name``
    The registered name users load it by (``assay.load_metric("my_metric[k=v]")``).
    Lower case, digits, ``_``, ``-`` and ``.``. A plugin registers each name once (twice
    is an error for that plugin). A name another plugin registered too is ambiguous:
    both plugins stay loaded, ``assay plugins`` and ``assay list`` show the clash, and
    loading the plain name is an error that tells the user to choose,
    ``assay.load_metric("my-distribution:my_metric")``.
``factory``
    A callable returning the object (usually the class itself). ``load_<kind>`` calls
    it with the keyword overrides the user gave; overrides the factory's signature does
    not accept are rejected with the close matches listed.
``**metadata``
    Free-form facts about the entry, shown by ``assay list <kind>`` and available as
    ``registry.get(name).metadata``. ``description=`` is shown in listings.

Keep plugin modules cheap to import: assay imports them on the first registry
lookup, so heavy libraries (torch, scipy, sacrebleu ...) belong inside the factory or
the methods that need them, not at module top level.

Every hook is a plain function taking ``register`` and returning nothing. assay
rejects (records as the plugin's load error, dropping all its registrations) a hook
whose name is not one of these (``assay_register_metricz``), a ``hookwrapper=True`` or
``wrapper=True`` hook, a hook without the ``register`` argument, a hook that returns a
value, and a function named like a hook but not marked ``@hookimpl``. A hook (or the
module's import) that raises anything, ``SystemExit`` included, is recorded the same
way; assay goes on with the other plugins unless ``ASSAY_STRICT_PLUGINS=1`` is set.
Replacing assay's own functions is recorded and shown by ``assay plugins``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import pluggy

PROJECT = "assay"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class Register(Protocol):
    """The callback every registration hook receives."""

    def __call__(self, name: str, factory: Callable[..., Any], **metadata: Any) -> None: ...


# --------------------------------------------------------------------------- commands, demo sections,
# generation metrics (issue 12: domain knowledge out of the core, registered like everything else)
@hookspec
def assay_register_generation_metrics(register: Register) -> None:
    """Register generation metrics: the quality of stored model outputs, one value per example.

    The factory returns an :class:`assay.uncertainty.GenerationMetric` (``name``, ``level``
    and ``__call__(stats) -> values``; higher = better). ``UEManager(gen_metrics=["accuracy"])``
    and ``assay ue`` resolve names here; ``assay list generation_metric`` lists them::

        @hookimpl
        def assay_register_generation_metrics(register):
            register("rouge_l", RougeL, description="ROUGE-L F1 of answer against reference")

    Loaded with ``assay.plugins.load("generation_metric", "accuracy")``.
    """


@hookspec
def assay_register_commands(register: Register) -> None:
    """Register sub-commands of the ``assay`` command line (pytest's ``pytest_addoption``, llm's
    ``register_commands``).

    ``register(name, run, help=..., add_arguments=..., description=..., epilog=...)``:

    ``name``
        The sub-command, ``assay NAME ...`` (lower case, digits, ``-``).
    ``run``
        ``run(args: argparse.Namespace) -> int``: the exit status. Raise
        :class:`assay.errors.AssayError` (or let an ``OSError`` escape) for bad input: assay
        prints ``assay NAME: error: ...`` and exits 2, as for its own commands; anything else
        is reported as an internal error (status 70).
    ``help``
        One line for ``assay --help``.
    ``add_arguments``
        Optional ``add_arguments(parser)``: adds the command's arguments to its
        ``argparse`` parser. :mod:`assay.cli.commands` has the shared flags (``add_json``
        for ``--json``, ``add_output`` for ``-o/--output``, ``add_verbose`` ...).
    ``description``, ``epilog``, ``formatter_class``
        Optional text for ``assay NAME --help`` (``description`` defaults to ``help``) and the
        ``argparse`` help formatter (``argparse.RawDescriptionHelpFormatter`` keeps line breaks).

    A name that is one of assay's own commands, or that another plugin registered too, is
    not added: ``assay`` prints one warning line naming both, and ``assay plugins`` shows the
    clash. An ``add_arguments`` that raises drops that command (with a warning line), never
    ``assay --help``. Example::

        @hookimpl
        def assay_register_commands(register):
            register("hello", run_hello, help="say hello", add_arguments=add_hello_arguments)
    """


@hookspec
def assay_register_demo_sections(register: Register) -> None:
    """Register sections of ``assay demo`` (what ``make run`` runs).

    ``register(name, run, title=..., order=...)``: ``run(out_dir: pathlib.Path) -> None``
    generates its data under ``out_dir`` (a folder of its own) and prints what it shows;
    ``title`` is its one line in ``assay demo --help``; sections run by increasing
    ``order`` (a number, default 100), then by name::

        @hookimpl
        def assay_register_demo_sections(register):
            register("segmentation", run_demo, title="ValUES-style tasks on synthetic maps", order=40)
    """
# --------------------------------------------------------------------------- end of the issue-12 block


@hookspec
def assay_register_metrics(register: Register) -> None:
    """Register metrics (instance, bulk or global; see :mod:`assay.metrics`).

    The factory returns a metric object with ``map`` / ``reduce`` (or
    ``update`` / ``compute`` / ``merge``) as documented in the metrics guide.
    Loaded with ``assay.load_metric("name[key=value]")``.
    """


@hookspec
def assay_register_metric_namespaces(register: Register) -> None:
    """Register metric namespaces: whole families of metrics resolved by name on demand.

    Use a namespace to expose a library's metrics without listing each one, e.g. every
    torchmetrics class or scikit-learn scoring function::

        @hookimpl
        def assay_register_metric_namespaces(register):
            register("torchmetrics", resolve_torchmetrics,
                     description="Any torchmetrics Metric class, by class name")

    ``register(namespace, resolver, **metadata)``:

    ``namespace``
        The prefix users write before the name, ``"torchmetrics"`` in
        ``assay.load_metric("torchmetrics:MulticlassAveragePrecision[num_classes=5]")``
        (letters, digits, ``_``, ``-`` and ``.``). A namespace belongs to one plugin: a
        second plugin registering the same namespace fails to load (its load error names
        both). A registered namespace is tried before a plugin qualifier
        (``"assay-classic:accuracy"``), so do not name a namespace like a distribution.
    ``resolver``
        A callable ``resolver(name, **options) -> Metric``: ``name`` is the text after the
        ``:`` (before any ``[...]``), ``options`` the parsed ``[key=value]`` overrides
        (``score_prefix`` included: set it on the metric, or pass it to
        :class:`assay.metrics.Metric`'s constructor). Return an :class:`assay.metrics.Metric`.
        Raise :class:`assay.errors.UnknownNameError` for a name the namespace does not
        hold (list the close matches), :class:`assay.errors.InvalidParameterError` for a
        bad option (wrap the library's own message with the metric's name), and
        :class:`assay.errors.MissingDependencyError` when the library behind the
        namespace is not installed. Import that library inside the resolver, never at
        module top level: registering a namespace must stay cheap.
    ``**metadata``
        As for every hook; ``description=`` is shown by ``assay plugins``.

    Namespaced names work wherever a metric name does: ``assay.load_metric``,
    ``assay.evaluate(..., metrics=[...])``, ``assay.compare`` and ``assay evaluate -m``.
    ``"ns:anything" in get_registry("metric")`` is true for a registered namespace; the
    resolver decides on load whether the name exists.
    """


@hookspec
def assay_register_estimators(register: Register) -> None:
    """Register uncertainty estimators (:class:`assay.uncertainty.Estimator` subclasses).

    An estimator declares its ``level`` (``"sequence"``, ``"token"`` or ``"claim"``) and
    the statistics it depends on; it returns uncertainty, higher = more uncertain.
    Loaded with ``assay.load_estimator(name)``.
    """


@hookspec
def assay_register_stat_calculators(register: Register) -> None:
    """Register statistic calculators (:class:`assay.uncertainty.StatCalculator`).

    A calculator declares the statistics it produces and those it needs; the
    :class:`~assay.uncertainty.UEManager` orders them as a dependency graph and runs
    each once. Loaded with ``assay.load_stat_calculator(name)``.
    """


@hookspec
def assay_register_ue_metrics(register: Register) -> None:
    """Register uncertainty-estimation metrics, called as ``ue_metric(uncertainty, quality) -> float``.

    ``uncertainty`` is higher = more uncertain, ``quality`` higher = better (binary
    correctness is 1 / 0). Loaded with ``assay.load_ue_metric("prr[max_rejection=0.5]")``.
    """


@hookspec
def assay_register_sentence_evaluators(register: Register) -> None:
    """Register sentence evaluators usable as ``sentence_evaluator=`` by name.

    The factory returns a callable ``(sent, w_vector) -> (correct_num, gold_set_size)``
    with two non-negative ints, ``correct_num <= gold_set_size``. It must be picklable
    (a module-level function or an instance of a module-level class), because parallel
    executors send it to workers. Loaded with ``assay.load_sentence_evaluator(name)``.
    """


@hookspec
def assay_register_executors(register: Register) -> None:
    """Register executors: how the shards of a :class:`assay.DataPool` are run.

    The factory takes keyword options (``workers=``, ``progress=``, ...) and returns an
    :class:`assay.Executor` with ``run(fn, tasks, shared, *, progress=None, desc=None)
    -> list``: ``fn(task, shared)`` for every task, ``shared`` sent to each worker once,
    results in task order (the full protocol: :mod:`assay.executors.base`). assay's own
    ``serial``, ``threads``, ``processes`` and ``spark`` executors are registered
    through this same hook. Loaded with
    ``assay.load_executor("processes[workers=4]")``.
    """


@hookspec
def assay_register_data_formats(register: Register) -> None:
    """Register data formats that turn a file's text into pool items.

    The factory returns an :class:`assay.DataFormat` (``parse(text, source=...)`` to a
    list of items; ``read(path)``). Register ``extensions=(".conllu",)`` as metadata so
    ``DataPool.from_file`` can guess the format from a file name. Loaded with
    ``assay.load_data_format(name)``.
    """


@hookspec
def assay_register_tasks(register: Register) -> None:
    """Register downstream tasks (ValUES style: OoD detection, failure detection, ...).

    The factory returns an :class:`assay.downstream.Task`: ``image_metrics(image, ctx)``
    gives the per-image values (run in parallel over images), ``reduce(per_image, ctx)``
    the set-level metrics, and the optional ``fit_image`` / ``fit`` prepare on a fitting
    split (e.g. Platt scaling on ``val``). Class attributes declare the metrics it writes,
    the arrays it needs and its default dataset splits; see :mod:`assay.downstream.task`.
    Loaded with ``assay.load_task(name)``.
    """


@hookspec
def assay_register_aggregations(register: Register) -> None:
    """Register aggregations of a pixel / voxel uncertainty map to one score per image.

    The factory returns a callable ``(uncertainty_map) -> float`` working on 2-D and
    3-D arrays. Loaded with ``assay.load_aggregation("patch_max[patch_size=10]")``.
    """


@hookspec
def assay_register_model_backends(register: Register) -> None:
    """Register model backends: what runs a language model for ``UEManager(data, model=...)``.

    The factory is called as ``factory(model, **options)``, where ``model`` is what the user
    passed (a folder path, a ``(model, tokenizer)`` pair ...) and ``options`` the
    ``model_options`` mapping; it returns an object with ``calculators(*, max_new_tokens,
    generation_params, samples_n, seed) -> list[StatCalculator]``: calculators that read
    the column ``input_texts`` (one prompt per example) and produce the model's statistics
    for one batch. An optional ``factory.accepts(model) -> bool`` lets the manager pick,
    among several backends, the first one that takes ``model``. Import the model library
    (torch ...) inside the factory, never at module top level. Loaded with
    ``assay.load_model_backend("transformers", model=...)``.
    """
