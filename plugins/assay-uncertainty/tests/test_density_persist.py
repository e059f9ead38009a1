"""Density estimators fit, save with the UEManager, load and rescore without the training data (issue 28, item 3)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from assay.errors import SaveFormatError
from assay_uncertainty.estimators_density import MahalanobisDistanceSeq
from assay_uncertainty.manager import UEManager
from assay_uncertainty.manager.persist import JSON_NAME, NPZ_NAME, _digest


def _records(rng, n, dim, shift):
    emb = rng.normal(size=(n, dim)) * (1 + np.linspace(0, 2, n))[:, None] + shift
    return [{"embeddings_decoder": e.tolist(), "greedy_log_likelihoods": (-rng.random(int(k)) * 2).tolist(),
             "log_probs": (-rng.random(3)).tolist(), "correct": int(i < n // 2)}
            for i, (e, k) in enumerate(zip(emb, rng.integers(1, 6, n)))]


ESTIMATORS = ["mahalanobis_distance[train_stats='{p}']", "relative_mahalanobis_distance[train_stats='{p}']",
              "RDESeq[train_stats='{p}']", "ppl_md[md_type=RMD, train_stats='{p}']", "msp"]  # an LM-Polygraph name too


@pytest.fixture
def fitted(tmp_path):
    rng = np.random.default_rng(0)
    dim = 5
    train_file = tmp_path / "train" / "train.npz"
    train_file.parent.mkdir()
    lls = [-rng.random(int(k)) * 2 for k in rng.integers(1, 6, 70)]
    np.savez(train_file, train_embeddings_decoder=rng.normal(size=(70, dim)),
             background_train_embeddings_decoder=rng.normal(size=(60, dim)) * 3,
             train_greedy_log_likelihoods=np.concatenate(lls),
             train_greedy_log_likelihoods__lengths=np.array([len(x) for x in lls]))
    man = UEManager(_records(rng, 30, dim, 0.0), estimators=[e.format(p=train_file) for e in ESTIMATORS],
                    gen_metrics=["accuracy"], ue_metrics=["prr", "roc_auc"])
    man()
    new = _records(rng, 17, dim, 0.7)
    return man, new, train_file


def test_loaded_manager_rescores_new_statistics_without_the_training_data(fitted, tmp_path):
    man, new, train_file = fitted
    before = man.estimate(new)
    assert sorted(k[1] for k in before) == sorted(man.estimator_names)
    # what each estimator gives when fit directly (the manager's values are the estimators')
    train = dict(np.load(train_file))
    direct = MahalanobisDistanceSeq().fit(train)({"embeddings_decoder": [r["embeddings_decoder"] for r in new]})
    np.testing.assert_array_equal(before[("sequence", man.estimator_names[0])], direct)
    man.save(tmp_path / "saved")
    train_file.unlink()
    train_file.parent.rmdir()
    loaded = UEManager.load(tmp_path / "saved")
    after = loaded.estimate(new)
    assert after.keys() == before.keys()
    for key in before:
        np.testing.assert_array_equal(after[key], before[key])
    # the loaded manager still scores what it saved, and saves its fitted state again
    assert loaded.metrics == man.metrics
    loaded.save(tmp_path / "again")
    again = UEManager.load(tmp_path / "again").estimate(new)
    for key in before:
        np.testing.assert_array_equal(again[key], before[key])


def test_the_save_holds_the_fitted_state_in_json_and_npz(fitted, tmp_path):
    man, _, _ = fitted
    man.save(tmp_path / "saved")
    doc = json.loads((tmp_path / "saved" / JSON_NAME).read_text())
    assert doc["version"] == 3
    assert [f["factory"] for f in doc["fitted"]] == ["mahalanobis_distance", "relative_mahalanobis_distance", "rde",
                                                      "ppl_md"]
    assert doc["fitted"][3]["options"] == {"embeddings_type": "decoder", "md_type": "RMD"}
    with np.load(tmp_path / "saved" / NPZ_NAME, allow_pickle=False) as z:
        assert set(doc["fitted"][0]["arrays"].values()) <= set(z.files)
        centroid = z[doc["fitted"][0]["arrays"]["centroid"]]
    assert centroid.shape == (5,)


def test_a_save_without_fitted_estimators_stays_version_2(tmp_path):
    man = UEManager([{"log_probs": [-0.1, -0.2], "correct": 1}, {"log_probs": [-1.0], "correct": 0}],
                    estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["prr"])
    man()
    man.save(tmp_path / "s")
    doc = json.loads((tmp_path / "s" / JSON_NAME).read_text())
    assert doc["version"] == 2 and "fitted" not in doc


def _rewrite(folder, edit):
    path = folder / JSON_NAME
    doc = json.loads(path.read_text())
    edit(doc)
    doc["content_sha256"] = _digest(doc)
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["fitted"][0].update(factory="no_such_estimator"), "fitted[0]"),
    (lambda d: d["fitted"][0]["arrays"].update(centroid="nope"), "fitted[0].arrays.centroid"),
    (lambda d: d["fitted"][0]["arrays"].update(centroid="f0_1", sigma_inv="f0_0"), "fitted[0]"),  # shapes swapped
    (lambda d: d["fitted"][0]["arrays"].update(centroid="a0", sigma_inv="f0_1"), "fitted[0].arrays.centroid"),  # used
    (lambda d: d["fitted"][1].update(estimator="msp_x"), "fitted[1].estimator"),
    (lambda d: d["fitted"][0]["arrays"].pop("sigma_inv"), "f0_1"),  # its array is then listed nowhere
])
def test_a_damaged_fitted_record_is_an_error_naming_the_field(fitted, tmp_path, edit, field):
    man, _, _ = fitted
    man.save(tmp_path / "saved")
    _rewrite(tmp_path / "saved", edit)
    with pytest.raises(SaveFormatError) as err:
        UEManager.load(tmp_path / "saved")
    assert err.value.field == field
