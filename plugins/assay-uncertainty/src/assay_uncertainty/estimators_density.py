"""Density-based estimators: how far an example's embedding lies from a training set's (LM-Polygraph's).

LM-Polygraph 0.7.0's ``MahalanobisDistanceSeq``, ``RelativeMahalanobisDistanceSeq``,
``RDESeq`` and ``PPLMDSeq``, with its statistic names and meanings:

``embeddings_<type>``
    One embedding per evaluated example (``(N, D)``; ``<type>`` is the ``embeddings_type``
    option, ``"decoder"`` by default, ``"encoder"`` for a seq2seq model's encoder).
``train_embeddings_<type>``
    The training set's embeddings (``(N_train, D)``), what the estimators are fit on.
``background_train_embeddings_<type>``
    A large general-purpose set's embeddings (relative Mahalanobis distance's ``MD_0``).
``greedy_log_likelihoods`` / ``train_greedy_log_likelihoods``
    The token log-probabilities of each evaluated / training example's greedy answer (PPL-MD).

**Fitting.** As in LM-Polygraph, an estimator that is not yet fitted fits on the first
statistics it is called with, when they hold the training statistics. The training set
is usually not a column of the evaluated examples (a :class:`~assay.uncertainty.UEManager`'s
statistics have one value per example), so it can be given up front instead:
``train_stats=`` (a mapping of those names to arrays, or the path of an ``.npz`` file
holding them; a ragged ``train_greedy_log_likelihoods`` is stored flat with
``train_greedy_log_likelihoods__lengths``), or :meth:`~_DensityEstimator.fit`. Once
fitted, the estimator keeps only its fitted state (means, inverse covariances, kernel-PCA
and robust-covariance parameters, training scores), never the training data, and later
calls with other training statistics do not refit (LM-Polygraph's behaviour too).

**Saving.** :meth:`~_DensityEstimator.fitted_state` returns that state as named numeric
arrays and :meth:`~_DensityEstimator.load_fitted_state` restores it; the UEManager saves it
with the manager (``arrays.npz``, no pickle) and a loaded manager rescores new statistics
with :meth:`UEManager.estimate <assay_uncertainty.manager.ue_manager.UEManager.estimate>`,
without the training data (and without scikit-learn: a fitted RDE applies its kernel PCA
and robust covariance with numpy, from the saved arrays).

**Numerics.** LM-Polygraph inverts the covariance in float64 and then computes the
distances in float32 (on the GPU when there is one); assay keeps float64 throughout, so the
two agree to float32 precision (relative 1e-6 in the tests) where the covariance is well
conditioned. Both add LM-Polygraph's jitter (the smallest ``10^k I``, ``k = -15 ... -1``,
that leaves no negative eigenvalue); with fewer training examples than dimensions the
covariance is singular and the distances mostly measure rounding: assay warns then. Each
example is scored on its own (a one-row product), so its value does not depend on the
other examples of the call: a matrix product over a batch of rows rounds differently from
one over a single row, and an ill-conditioned inverse covariance (a transformer's last
hidden state lies in a hyperplane after its layer norm) turned that into differences of
1e-4 (relative) between batch sizes.

**Options.** ``embeddings_type`` and ``md_type`` (PPL-MD: ``"MD"`` or ``"RMD"``) as in
LM-Polygraph. ``normalize=True`` is rejected: LM-Polygraph's normalisation,
``clip((max - d) / (max - min), 0, 1)``, uses the extremes of every distance scored so far
(so a value depends on the batches before it) and turns the distance into a confidence
(higher = closer to the training data), against the estimator contract (higher = more
uncertain). ``parameters_path=`` (LM-Polygraph's ``torch.save`` folder) is rejected: the
fitted state is saved with the manager instead.

scikit-learn (``KernelPCA``, ``MinCovDet``, ``train_test_split``, as LM-Polygraph calls
them) is imported when RDE or PPL-MD fits: ``pip install assay-uncertainty[density]``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.plugins.deps import require
from assay.uncertainty.base import Estimator
from assay.validation import as_array, check_choice, check_str

__all__ = [
    "JITTERS", "MahalanobisDistanceSeq", "PPLMDSeq", "RDESeq", "RelativeMahalanobisDistanceSeq", "fit_gaussian",
    "mahalanobis", "read_train_stats",
]

#: LM-Polygraph's covariance jitters, tried in this order
JITTERS = tuple(10.0 ** k for k in range(-15, 0))


def read_train_stats(source: Any, owner: str) -> dict[str, Any]:
    """``train_stats=``: a mapping of statistic names to values, or an ``.npz`` file of them (no pickle).

    In the file, a ragged statistic (``train_greedy_log_likelihoods``: one array per
    example) is stored flat with ``<name>__lengths``.
    """
    if isinstance(source, Mapping):
        return dict(source)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source).expanduser()
        if not path.is_file():
            raise InvalidParameterError(f"The 'train_stats' file of {owner} does not exist: {str(path)!r}.")
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
        except (ValueError, OSError) as exc:
            raise InvalidParameterError(f"The 'train_stats' file of {owner}, {str(path)!r}, is not an .npz of numeric "
                                        f"arrays without pickled objects ({exc}).") from None
        out: dict[str, Any] = {}
        for key, arr in arrays.items():
            if key.endswith("__lengths"):
                continue
            lens = arrays.get(key + "__lengths")
            if lens is None:
                out[key] = arr
            else:
                if lens.ndim != 1 or int(lens.sum()) != arr.shape[0] or (lens.size and lens.min() < 0):
                    raise InvalidParameterError(f"The 'train_stats' file of {owner}: {key}__lengths must be "
                                                f"non-negative lengths summing to {arr.shape[0]}; got {lens!r:.80}.")
                out[key] = np.split(arr, np.cumsum(lens)[:-1]) if lens.size else []
        return out
    raise InvalidParameterError(f"The 'train_stats' option of {owner} must be a mapping of statistic names to arrays "
                                f"or the path of an .npz file; got {type(source).__name__}.")


def _matrix(value: Any, name: str, owner: str, dim: int | None = None) -> np.ndarray:
    """A ``(N, D)`` float64 matrix from an array, a tensor or a list of 1-D rows."""
    if isinstance(value, (list, tuple)):
        value = [as_array(v, name, owner=owner) for v in value]
    arr = np.asarray(as_array(value, name, owner=owner), dtype=np.float64)
    if arr.ndim != 2:
        raise InvalidParameterError(f"{owner}: statistic {name!r} must be one embedding per example, shape (N, D); "
                                    f"got shape {arr.shape}.")
    if dim is not None and arr.shape[1] != dim:
        raise InvalidParameterError(f"{owner}: statistic {name!r} has embeddings of dimension {arr.shape[1]}, but the "
                                    f"estimator was fit on dimension {dim}.")
    return arr


def fit_gaussian(train: np.ndarray, owner: str) -> tuple[np.ndarray, np.ndarray]:
    """``(centroid, sigma_inv)``: LM-Polygraph's ``compute_inv_covariance`` on ``train`` (float64 throughout).

    The unbiased covariance (``torch.cov``), NaN / inf entries set to 0, plus the first
    jitter of :data:`JITTERS` that leaves no negative eigenvalue (the last one if none does),
    inverted.
    """
    n, d = train.shape
    if n < 2:
        raise InvalidParameterError(f"{owner}: fitting needs at least 2 training embeddings; got {n}.")
    if n <= d:
        warnings.warn(f"{owner}: {n} training embeddings of dimension {d}: the covariance is singular and the "
                      "Mahalanobis distances depend on rounding (use more training examples than dimensions).",
                      RuntimeWarning, stacklevel=4)
    centroid = train.mean(axis=0)
    cov = np.nan_to_num(np.cov(train, rowvar=False).reshape(d, d), nan=0.0, posinf=0.0, neginf=0.0)
    eye = np.eye(d)
    jitter = JITTERS[-1]
    for eps in JITTERS:
        if (np.linalg.eigvalsh(cov + eps * eye) >= 0).all():
            jitter = eps
            break
    return centroid, np.linalg.inv(cov + jitter * eye)


def mahalanobis(x: np.ndarray, centroid: np.ndarray, sigma_inv: np.ndarray) -> np.ndarray:
    """``sqrt((x - mu)^T Sigma^-1 (x - mu))`` per row (NaN, with a warning, where rounding makes it negative)."""
    diff = x - centroid
    q = np.einsum("nd,nd->n", diff @ sigma_inv, diff)  # the product by BLAS: 3-operand einsum loops in C
    if (q < 0).any():
        warnings.warn(f"Mahalanobis distance: {int((q < 0).sum())} squared distance(s) are negative by rounding "
                      "(an ill-conditioned covariance); those distances are NaN.", RuntimeWarning, stacklevel=3)
    with np.errstate(invalid="ignore"):
        return np.sqrt(q)


def _no_normalize(normalize: Any, parameters_path: Any, owner: str) -> None:
    if normalize:
        raise InvalidParameterError(
            f"{owner}: normalize=True is not supported. LM-Polygraph's normalisation "
            "clip((max - d) / (max - min), 0, 1) uses the extremes of every distance scored so far, so a value "
            "depends on the batches scored before it, and it turns the distance into a confidence (higher = closer "
            "to the training data), against the estimator contract (higher = more uncertain). The UE metrics rank "
            "the raw distance (normalize=False, LM-Polygraph's default).")
    if parameters_path is not None:
        raise InvalidParameterError(
            f"{owner}: parameters_path (LM-Polygraph's torch.save folder) is not supported: the fitted state is saved "
            "with the UEManager (UEManager.save / UEManager.load, JSON and .npz, no pickle), or read with "
            "fitted_state() and restored with load_fitted_state().")


class _DensityEstimator(Estimator):
    """A sequence-level estimator with a fitted state (see the module docstring)."""

    level = "sequence"
    #: the names of the arrays of the fitted state
    state_keys: tuple[str, ...] = ()

    def __init__(self, *, embeddings_type: str = "decoder", parameters_path: str | None = None,
                 normalize: bool = False, train_stats: Any = None) -> None:
        self.embeddings_type = check_str(embeddings_type, "embeddings_type", owner=self.name, allow_empty=False)
        _no_normalize(normalize, parameters_path, self.name)
        self.normalize = False
        self.parameters_path = None
        self._state: dict[str, np.ndarray] | None = None
        super().__init__(dependencies=self._dependencies())
        if train_stats is not None:
            self.fit(read_train_stats(train_stats, self.name))

    # ------------------------------------------------------------------ what subclasses define
    def _dependencies(self) -> tuple[str, ...]:
        return (f"embeddings_{self.embeddings_type}",)

    def train_stat_names(self) -> tuple[str, ...]:
        """The training statistics :meth:`fit` reads."""
        return (f"train_embeddings_{self.embeddings_type}",)

    def _fit(self, train: Mapping[str, Any]) -> dict[str, np.ndarray]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _apply(self, stats: Mapping[str, Any]) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    # ------------------------------------------------------------------ fitting and state
    @property
    def is_fitted(self) -> bool:
        return self._state is not None

    def fit(self, train_stats: Mapping[str, Any]) -> _DensityEstimator:
        """Fit on training statistics named as LM-Polygraph names them (:meth:`train_stat_names`); returns self."""
        missing = [s for s in self.train_stat_names() if s not in train_stats]
        if missing:
            raise InvalidParameterError(
                f"{self.name}: fitting needs the training statistics {', '.join(map(repr, missing))}; got "
                f"{', '.join(map(repr, sorted(train_stats))) or 'none'}.")
        self._state = self._fit(train_stats)
        return self

    def fitted_state(self) -> dict[str, np.ndarray] | None:
        """The fitted state as named float64 arrays (None before fitting); :meth:`load_fitted_state` restores it."""
        return None if self._state is None else {k: np.array(v, dtype=np.float64) for k, v in self._state.items()}

    def fitted_options(self) -> dict[str, Any]:
        """The constructor options the fitted state belongs to (saved beside it)."""
        return {"embeddings_type": self.embeddings_type}

    def load_fitted_state(self, state: Mapping[str, Any]) -> _DensityEstimator:
        """Restore a state from :meth:`fitted_state`; every array named in ``state_keys``, shapes checked."""
        got = set(state)
        if got != set(self.state_keys):
            raise InvalidParameterError(f"{self.name}: a fitted state holds the arrays {sorted(self.state_keys)}; "
                                        f"got {sorted(got)}.")
        arrays = {k: np.asarray(state[k], dtype=np.float64) for k in self.state_keys}
        self._check_state(arrays)
        self._state = arrays
        return self

    def _check_state(self, s: Mapping[str, np.ndarray]) -> None:
        for prefix in ("", "bg_"):
            if prefix + "centroid" in s:
                c, p = s[prefix + "centroid"], s[prefix + "sigma_inv"]
                if c.ndim != 1 or p.shape != (c.size, c.size):
                    raise InvalidParameterError(f"{self.name}: fitted state {prefix}centroid {c.shape} and "
                                                f"{prefix}sigma_inv {p.shape} do not fit together.")

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        if self._state is None:
            if not all(s in stats for s in self.train_stat_names()):
                need = ", ".join(map(repr, self.train_stat_names()))
                raise InvalidParameterError(
                    f"{self.name} is not fitted: give it the training statistics ({need}) with train_stats= or "
                    "fit(), or include them in the statistics of its first call.")
            self.fit(stats)
        # one example at a time: the value must not depend on the batch (module docstring, "Numerics")
        name = f"embeddings_{self.embeddings_type}"
        if name not in stats:
            return self._apply(stats)  # _apply names the missing statistic
        n = len(stats[name])
        rows = [self._apply({k: stats[k][i:i + 1] for k in self.dependencies if k in stats}) for i in range(n)]
        return np.concatenate(rows) if rows else np.zeros(0)

    def _embeddings(self, stats: Mapping[str, Any], key: str = "centroid") -> np.ndarray:
        name = f"embeddings_{self.embeddings_type}"
        if name not in stats:
            raise InvalidParameterError(f"{self.name} reads the statistic {name!r}, which the statistics lack; they "
                                        f"have: {', '.join(sorted(stats)) or 'nothing'}.")
        assert self._state is not None
        return _matrix(stats[name], name, self.name, dim=self._state[key].shape[-1])


class MahalanobisDistanceSeq(_DensityEstimator):
    r"""Mahalanobis distance of the example's embedding from the training embeddings' Gaussian.

    ``sqrt((h - mu)^T Sigma^-1 (h - mu))`` with ``mu`` and ``Sigma`` the mean and (jittered)
    covariance of ``train_embeddings_<type>`` (LM-Polygraph's ``MahalanobisDistanceSeq``).
    """

    name = "mahalanobis_distance"
    state_keys = ("centroid", "sigma_inv")

    def _fit(self, train):
        name = f"train_embeddings_{self.embeddings_type}"
        centroid, sigma_inv = fit_gaussian(_matrix(train[name], name, self.name), self.name)
        return {"centroid": centroid, "sigma_inv": sigma_inv}

    def _apply(self, stats):
        s = self._state
        assert s is not None
        return mahalanobis(self._embeddings(stats), s["centroid"], s["sigma_inv"])


class RelativeMahalanobisDistanceSeq(_DensityEstimator):
    r"""``MD(h) - MD_0(h)``: the Mahalanobis distance from the training set minus that from a background set.

    ``MD_0`` is fit on ``background_train_embeddings_<type>``, a large general-purpose set
    (Ren et al. 2023; LM-Polygraph's ``RelativeMahalanobisDistanceSeq``).
    """

    name = "relative_mahalanobis_distance"
    state_keys = ("centroid", "sigma_inv", "bg_centroid", "bg_sigma_inv")

    def train_stat_names(self) -> tuple[str, ...]:
        return (f"train_embeddings_{self.embeddings_type}", f"background_train_embeddings_{self.embeddings_type}")

    def _fit(self, train):
        out = {}
        for prefix, name in zip(("", "bg_"), self.train_stat_names()):
            out[prefix + "centroid"], out[prefix + "sigma_inv"] = fit_gaussian(
                _matrix(train[name], name, self.name), self.name)
        return out

    def _check_state(self, s):
        super()._check_state(s)
        if s["centroid"].shape != s["bg_centroid"].shape:
            raise InvalidParameterError(f"{self.name}: fitted state centroid {s['centroid'].shape} and bg_centroid "
                                        f"{s['bg_centroid'].shape} differ in dimension.")

    def _apply(self, stats):
        s = self._state
        assert s is not None
        h = self._embeddings(stats)
        return mahalanobis(h, s["centroid"], s["sigma_inv"]) - mahalanobis(h, s["bg_centroid"], s["bg_sigma_inv"])


def _mcd_fit(x: np.ndarray, owner: str) -> Any:
    """LM-Polygraph's ``MCD_covariance``: ``MinCovDet(random_state=42)``, retried with support_fraction 0.9, 1.0."""
    covariance = require("sklearn.covariance", package="scikit-learn", purpose=owner)
    for fraction in (None, 0.9, 1.0):
        try:
            return covariance.MinCovDet(random_state=42, support_fraction=fraction).fit(x)
        except ValueError as exc:
            if fraction == 1.0:
                raise
            warnings.warn(f"{owner}: MinCovDet failed ({exc}); retrying with support_fraction="
                          f"{0.9 if fraction is None else 1.0}, as LM-Polygraph does.", RuntimeWarning, stacklevel=4)
    raise AssertionError("unreachable")  # pragma: no cover


class RDESeq(_DensityEstimator):
    r"""Robust density estimation: Mahalanobis distance in an RBF kernel-PCA space with a robust covariance.

    LM-Polygraph's ``RDESeq``: ``KernelPCA(n_components=100, kernel="rbf", random_state=42)``
    fit on the training embeddings, ``MinCovDet(random_state=42)`` on their projection, and
    the value is MinCovDet's ``mahalanobis`` of the projected example, which is the *squared*
    distance. Fitting uses scikit-learn; scoring applies the saved kernel-PCA arrays
    (``X_fit_``, the kernel centerer's row means and grand mean, the eigenvectors scaled by
    the eigenvalues) and the robust location and precision with numpy, so a loaded
    estimator scores without scikit-learn (a feature scikit-learn's objects, saved only by
    pickle, lack).
    """

    name = "rde"
    state_keys = ("x_fit", "k_fit_rows", "k_fit_all", "alphas", "gamma", "location", "precision")

    def _fit(self, train):
        name = f"train_embeddings_{self.embeddings_type}"
        x = _matrix(train[name], name, self.name)
        decomposition = require("sklearn.decomposition", package="scikit-learn", purpose=self.name)
        pca = decomposition.KernelPCA(n_components=100, kernel="rbf", random_state=42, gamma=None)
        x_train = pca.fit_transform(x)
        mcd = _mcd_fit(x_train, self.name)
        vals, vecs = np.asarray(pca.eigenvalues_, dtype=np.float64), np.asarray(pca.eigenvectors_, dtype=np.float64)
        alphas = np.zeros_like(vecs)
        nz = np.flatnonzero(vals)
        alphas[:, nz] = vecs[:, nz] / np.sqrt(vals[nz])  # KernelPCA.transform's scaled alphas
        return {"x_fit": np.asarray(pca.X_fit_, dtype=np.float64),
                "k_fit_rows": np.asarray(pca._centerer.K_fit_rows_, dtype=np.float64),
                "k_fit_all": np.asarray(pca._centerer.K_fit_all_, dtype=np.float64).reshape(()),
                "alphas": alphas, "gamma": np.asarray(pca.gamma_, dtype=np.float64).reshape(()),
                "location": np.asarray(mcd.location_, dtype=np.float64),
                "precision": np.asarray(mcd.precision_, dtype=np.float64)}

    def _check_state(self, s):
        n, d = s["x_fit"].shape if s["x_fit"].ndim == 2 else (-1, -1)
        k = s["location"].shape[0] if s["location"].ndim == 1 else -1
        ok = (n > 0 and s["k_fit_rows"].shape == (n,) and s["k_fit_all"].shape == () and s["gamma"].shape == ()
              and s["alphas"].shape == (n, k) and s["precision"].shape == (k, k))
        if not ok:
            raise InvalidParameterError(f"{self.name}: the fitted state's arrays do not fit together "
                                        f"({ {key: v.shape for key, v in s.items()} }).")

    def _apply(self, stats):
        s = self._state
        assert s is not None
        h = self._embeddings(stats, "x_fit")
        x_fit = s["x_fit"]
        # rbf_kernel(h, X_fit) as scikit-learn computes it: exp(-gamma * clip(|h|^2 - 2 h.x + |x|^2, 0))
        d2 = (h * h).sum(axis=1)[:, None] - 2.0 * (h @ x_fit.T) + (x_fit * x_fit).sum(axis=1)[None, :]
        k = np.exp(-float(s["gamma"]) * np.maximum(d2, 0.0))
        # KernelCenterer.transform
        k = k - s["k_fit_rows"][None, :] - (k.sum(axis=1) / x_fit.shape[0])[:, None] + float(s["k_fit_all"])
        z = k @ s["alphas"] - s["location"]
        return np.sum((z @ s["precision"]) * z, axis=1)


def _perplexities(column: Any) -> np.ndarray:
    """LM-Polygraph's ``Perplexity``: ``-mean(ll)`` per example (NaN, with numpy's warning, for an empty one)."""
    return np.array([-np.mean(np.asarray(ll, dtype=np.float64)) for ll in column])


def _rank(target: np.ndarray, source: np.ndarray) -> np.ndarray:
    """Share of ``source`` values at or below each target value: LM-Polygraph's ``rank``,
    ``mean(x >= source)``, by a binary search in the sorted source (NaN compares false: a NaN target
    ranks 0, a NaN source value counts for no target)."""
    counts = np.searchsorted(np.sort(source), target, side="right").astype(np.float64)  # NaNs sort last
    counts[np.isnan(target)] = 0.0
    return counts / len(source)


class PPLMDSeq(_DensityEstimator):
    r"""``(rank of the perplexity + rank of the (relative) Mahalanobis distance) / 2`` among training examples.

    LM-Polygraph's ``PPLMDSeq``: the perplexity is ranked among the training answers'
    perplexities (``train_greedy_log_likelihoods``); the distance (``md_type="MD"`` or
    ``"RMD"``, fit on all training embeddings) among the distances of a held-out 30% of the
    training embeddings from a distance fit on the other 70%
    (``train_test_split(test_size=0.3, random_state=42)``).
    """

    name = "ppl_md"

    def __init__(self, *, embeddings_type: str = "decoder", md_type: str = "MD", parameters_path: str | None = None,
                 normalize: bool = False, train_stats: Any = None) -> None:
        self.md_type = check_choice(md_type, "md_type", ("MD", "RMD"), owner=self.name)
        inner = MahalanobisDistanceSeq if self.md_type == "MD" else RelativeMahalanobisDistanceSeq
        self._md = inner(embeddings_type=embeddings_type)
        self.state_keys = (*self._md.state_keys, "train_ppl", "train_md")
        super().__init__(embeddings_type=embeddings_type, parameters_path=parameters_path, normalize=normalize,
                         train_stats=train_stats)

    def _dependencies(self) -> tuple[str, ...]:
        return ("greedy_log_likelihoods", f"embeddings_{self.embeddings_type}")

    def train_stat_names(self) -> tuple[str, ...]:
        return ("train_greedy_log_likelihoods", *self._md.train_stat_names())

    def fitted_options(self) -> dict[str, Any]:
        return {**super().fitted_options(), "md_type": self.md_type}

    def _fit(self, train):
        self._md.fit(train)
        train_ppl = _perplexities(train["train_greedy_log_likelihoods"])
        selection = require("sklearn.model_selection", package="scikit-learn", purpose=self.name)
        name = f"train_embeddings_{self.embeddings_type}"
        fit_part, held_out = selection.train_test_split(_matrix(train[name], name, self.name), test_size=0.3,
                                                        random_state=42)
        val = type(self._md)(embeddings_type=self.embeddings_type).fit({**train, name: fit_part})
        train_md = val._apply({f"embeddings_{self.embeddings_type}": held_out})
        state = self._md.fitted_state()
        assert state is not None
        return {**state, "train_ppl": train_ppl, "train_md": train_md}

    def _check_state(self, s):
        self._md.load_fitted_state({k: s[k] for k in self._md.state_keys})
        for key in ("train_ppl", "train_md"):
            if s[key].ndim != 1 or s[key].size == 0:
                raise InvalidParameterError(f"{self.name}: fitted state {key} must be a non-empty 1-D array; got "
                                            f"shape {s[key].shape}.")

    def _apply(self, stats):
        s = self._state
        assert s is not None
        if "greedy_log_likelihoods" not in stats:
            raise InvalidParameterError(f"{self.name} reads the statistic 'greedy_log_likelihoods', which the "
                                        f"statistics lack; they have: {', '.join(sorted(stats)) or 'nothing'}.")
        ppl = _perplexities(stats["greedy_log_likelihoods"])
        md = self._md._apply(stats)
        return (_rank(ppl, s["train_ppl"]) + _rank(md, s["train_md"])) / 2

