"""``assay ue CONFIG.yaml``: score uncertainty estimators on stored model outputs.

The config (YAML, read with ``yaml.safe_load``)::

    data: outputs.jsonl            # JSON Lines / .json / .npz, relative to the config file
    estimators: [msp, perplexity, mean_token_entropy]
    gen_metrics: [accuracy]
    ue_metrics: [prr, "prr[max_rejection=0.5]", roc_auc, aurc]
    save_path: ue-run              # output folder (relative to the config file); --output overrides
    nan_policy: drop               # optional: drop | raise
    plots: true                    # optional: PNG pictures (needs matplotlib)

Writes the saved manager (``manager.json`` + ``arrays.npz``), ``table.md`` (estimator x UE
metric for each level and generation metric) and the PNG plots into the output folder,
and prints the tables.
"""

from __future__ import annotations

import argparse
from pathlib import Path

KEYS = {"data", "estimators", "gen_metrics", "ue_metrics", "save_path", "nan_policy", "plots"}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "ue", help="score uncertainty estimators on stored model outputs (a YAML config)",
        description="Compute uncertainty estimators, generation metrics and UE metrics (PRR, AURC, ROC-AUC ...) "
        "on stored model outputs described by a YAML config; write the saved manager, a Markdown table and plots.",
    )
    p.add_argument("config", type=Path, help="YAML config (keys: " + ", ".join(sorted(KEYS)) + ")")
    p.add_argument("--output", "-o", type=Path, default=None, help="output folder (default: save_path of the config)")
    p.add_argument("--no-plots", action="store_true", help="do not draw the PNG plots")
    p.set_defaults(func=run)


def load_config(path: Path) -> dict:
    import yaml

    from assay.errors import InvalidParameterError

    if not path.exists():
        raise FileNotFoundError(f"No such config file: {str(path)!r}")
    cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(cfg, dict):
        raise InvalidParameterError(f"{path}: the config must be a mapping of keys; got {type(cfg).__name__}.")
    unknown = sorted(set(cfg) - KEYS)
    if unknown:
        raise InvalidParameterError(f"{path}: unknown config key(s) {unknown}; accepted: {sorted(KEYS)}.")
    for key in ("data", "estimators", "gen_metrics", "ue_metrics"):
        if key not in cfg:
            raise InvalidParameterError(f"{path}: the config needs the key {key!r}.")
    for key in ("estimators", "gen_metrics", "ue_metrics"):
        if not isinstance(cfg[key], list) or not all(isinstance(x, str) for x in cfg[key]):
            raise InvalidParameterError(f"{path}: {key!r} must be a list of names; got {cfg[key]!r}.")
    return cfg


def run(args: argparse.Namespace) -> int:
    from assay.uncertainty import UEManager

    cfg = load_config(args.config)
    base = args.config.parent
    out = args.output or base / str(cfg.get("save_path", "ue-run"))
    man = UEManager(base / str(cfg["data"]), estimators=cfg["estimators"], gen_metrics=cfg["gen_metrics"],
                    ue_metrics=cfg["ue_metrics"], nan_policy=cfg.get("nan_policy", "drop"))
    man()
    man.save(out)
    sections = []
    for level, gen in dict.fromkeys((k[0], k[2]) for k in man.metrics):
        sections.append(f"## {level} level, quality = {gen}\n\n{man.table(level=level, gen_metric=gen)}\n")
    if man.notes:
        sections.append("## Notes\n\n" + "\n".join(f"- {n}" for n in dict.fromkeys(man.notes)) + "\n")
    text = "\n".join(sections)
    (out / "table.md").write_text(text, encoding="utf-8")
    print(text)
    if cfg.get("plots", True) and not args.no_plots:
        from assay.uncertainty.plots import draw_all

        written = draw_all(man, out)
        print(f"{len(written)} plot(s) written to {out}")
    print(f"Saved manager, table.md in {out}")
    return 0
