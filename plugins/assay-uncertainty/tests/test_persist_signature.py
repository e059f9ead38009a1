"""The provenance signature of a UEManager: in manager.json, kept by load and re-save, under the assay ue table."""

from __future__ import annotations

import hashlib
import importlib.metadata as metadata
import json

import pytest

import assay
from assay.errors import SaveFormatError
from assay_uncertainty.manager import UEManager

RECS = [{"log_probs": [-0.1], "correct": 1}, {"log_probs": [-2.0], "correct": 0},
        {"log_probs": [-0.5, -0.5], "correct": 1}]
# written by hand: the default convention of AURC is shown, PRR's option as given, the generation
# metric is assay's own (no plugin version), the estimators and UE metrics come from assay-uncertainty
SIG = ("estimators:msp,perplexity|gen_metrics:accuracy|ue_metrics:prr[max_rejection=0.5],aurc[convention=fd-shifts],"
       f"aurc[convention=values]|assay:{assay.__version__}|plugins:assay-uncertainty="
       f"{metadata.version('assay-uncertainty')}")


def manager():
    man = UEManager(RECS, estimators=["msp", "perplexity"], gen_metrics=["accuracy"],
                    ue_metrics=["prr[max_rejection=0.5]", "aurc", "aurc[convention=values]"])
    man()
    return man


def reseal(run, doc):
    """Write ``doc`` with a fresh content digest, as a careful editor would."""
    body = {k: v for k, v in doc.items() if k != "content_sha256"}
    canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    doc["content_sha256"] = hashlib.sha256(canon.encode()).hexdigest()
    (run / "manager.json").write_text(json.dumps(doc, indent=1))


def test_manager_json_carries_the_signature_and_load_keeps_it(tmp_path):
    man = manager()
    assert man.signature.to_string() == SIG
    man.save(tmp_path / "run")
    assert json.loads((tmp_path / "run" / "manager.json").read_text())["signature"] == SIG
    back = UEManager.load(tmp_path / "run")
    # the loaded manager has names only; its saved specs keep the conventions and versions
    assert back.signature.to_string() == SIG
    back.save(tmp_path / "again")
    assert json.loads((tmp_path / "again" / "manager.json").read_text())["signature"] == SIG


def test_saves_without_a_signature_still_load(tmp_path):
    manager().save(tmp_path / "run")
    doc = json.loads((tmp_path / "run" / "manager.json").read_text())
    del doc["signature"]
    reseal(tmp_path / "run", doc)
    back = UEManager.load(tmp_path / "run")
    assert back.signature.component("ue_metrics") == ("prr[max_rejection=0.5]", "aurc", "aurc[convention=values]")


@pytest.mark.parametrize("bad", [7, "n:many|assay:1"])
def test_a_damaged_signature_names_the_field(tmp_path, bad):
    manager().save(tmp_path / "run")
    doc = json.loads((tmp_path / "run" / "manager.json").read_text())
    doc["signature"] = bad
    reseal(tmp_path / "run", doc)
    with pytest.raises(SaveFormatError, match="signature") as info:
        UEManager.load(tmp_path / "run")
    assert info.value.field == "signature"


def test_cli_ue_table_ends_with_the_signature(tmp_path, capsys):
    from assay.cli import main

    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECS))
    (tmp_path / "c.yaml").write_text("data: d.jsonl\nestimators: [msp, perplexity]\ngen_metrics: [accuracy]\n"
                                     "ue_metrics: ['prr[max_rejection=0.5]', aurc, 'aurc[convention=values]']\n"
                                     "save_path: out\nplots: false\n")
    assert main(["ue", str(tmp_path / "c.yaml")]) == 0
    # assay ue resamples by default (--n-resamples 1000): the settings are part of the signature
    sig = SIG.replace("|assay:", "|resample:bootstrap|ci:percentile|n:1000|level:0.95|seed:0|assay:")
    table = (tmp_path / "out" / "table.md").read_text()
    assert table.rstrip("\n").splitlines()[-1] == f"Signature: `{sig}`"
    assert f"Signature: `{sig}`" in capsys.readouterr().out
    assert main(["ue", str(tmp_path / "c.yaml"), "--n-resamples", "0", "-o", str(tmp_path / "o0")]) == 0
    assert (tmp_path / "o0" / "table.md").read_text().rstrip("\n").splitlines()[-1] == f"Signature: `{SIG}`"
