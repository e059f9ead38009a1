"""The ``model:``, ``dataset:`` and ``seed:`` sections of an ``assay ue`` config (the model loop).

::

    model:
      path: tiny-model              # a local model folder, relative to the config file
      type: causal                  # optional: causal | seq2seq (default: from the model's config)
      device: cpu                   # optional (default: CUDA when available, else CPU)
      dtype: float32                # optional: float32 | float16 | bfloat16 | float64
      load_args: {}                 # optional: more from_pretrained arguments (never trust_remote_code)
      ensemble: [seed-1, seed-2]    # optional: more model folders (relative to the config file) that with
                                    # path make a deep ensemble: it gives ensemble_token_scores, which the
                                    # ensemble estimators (EPT*, PET*, EPS*, PES*) read; the folders must
                                    # share path's tokenizer
      ensembling_mode: pe           # optional, with ensemble: pe | ep (the posterior beams are decoded with)
      ensemble_generation_params: {num_beams: 5, length_penalty: 1.0}  # optional, with ensemble
      batch_size: 4                 # optional (1)
      max_new_tokens: 16            # optional (100)
      samples_n: 5                  # optional (10): sampled answers per example
      generation_params: {temperature: 1.0, top_k: 50, top_p: 0.95, stop_strings: ["\\n"]}
      ignore_exceptions: false      # optional
      save_stats: [greedy_log_probs]  # optional
      cache_dir: cache              # optional: keep each finished batch there (relative to the config
                                    # file; one run per seed in cache_dir/seed-<s>); a run killed and
                                    # started again computes only the examples not done
    dataset:
      path: qa.jsonl                # .jsonl / .json / .csv, or a datasets folder (needs `datasets`)
      split: test                   # for a datasets folder with several splits
      text_column: question
      label_column: answer          # optional: the reference (a string) or references (a list)
      template: "Q: {text}\\nA:"     # optional; {few_shot} places the demonstrations
      few_shot: 2                   # optional: the first rows as demonstrations
      few_shot_template: "Q: {text}\\nA: {label}\\n"
      subsample: 100                # optional: rows drawn with the dataset seed
      size: 50                      # optional: the first rows (after subsampling)
      seed: 0                       # optional: the subsampling seed
    seed: [1, 2, 3]                 # one run and one saved manager per seed, in save_path/seed-<s>

A black-box model behind an OpenAI-compatible endpoint (the ``openai`` model backend of
assay-transformers) takes ``url`` instead of ``path``, with its own keys (``type``,
``device``, ``dtype`` and ``load_args`` are for a local folder, an error with ``url``)::

    model:
      url: http://127.0.0.1:8000/v1  # the server's API root
      name: my-model                # the model name sent with each request
      endpoint: chat                # optional: chat | completions
      timeout: 60                   # optional: seconds per request
      max_retries: 2                # optional
      logprobs: false               # optional: ask for log-probabilities (an error if none come back)
      top_logprobs: 5               # optional
      system_prompt: "..."          # optional (chat)
      batch_size: 4 ...             # and the keys of every model run (generation_params: temperature,
                                    # top_p, stop_strings)

The API key is never in a config: the ``OPENAI_API_KEY`` environment variable gives it.

Each run's manager gets ``--n-resamples`` and ``--confidence-level`` (its intervals and the
marks of the estimators not significantly worse than the best, as with ``data:``). Its seed
seeds both the model's sampling and the resampling: the config's ``seed:``, or ``--seed``
when the config has none (then one run, in ``save_path``; neither: a fresh seed, saved); both
at once is an error naming the two.

Every unknown key is a ``ConfigError`` naming its key path (``model.batchsize``).

A config is data: ``trust_remote_code`` (in ``model`` or ``model.load_args``), which would run
the model folder's own Python, is a ``ConfigError`` naming the key and the only opt-in, the
command-line flag ``assay ue --trust-remote-code`` (in Python, the backend's keyword
``trust_remote_code=True``: ``UEManager(model=..., model_options={"trust_remote_code": True})``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.errors import ConfigError

MODEL_KEYS = ("path", "type", "device", "dtype", "load_args", "batch_size", "max_new_tokens", "samples_n",
              "generation_params", "ignore_exceptions", "save_stats", "url", "name", "endpoint", "timeout",
              "max_retries", "logprobs", "top_logprobs", "system_prompt", "cache_dir", "ensemble", "ensembling_mode",
              "ensemble_generation_params")
#: the keys of a local model folder (``path``) and of a model behind an OpenAI-compatible endpoint (``url``)
FOLDER_KEYS = ("type", "device", "dtype", "load_args", "ensemble", "ensembling_mode", "ensemble_generation_params")
URL_KEYS = ("name", "endpoint", "timeout", "max_retries", "logprobs", "top_logprobs", "system_prompt")
DATASET_KEYS = ("path", "split", "text_column", "label_column", "template", "few_shot", "few_shot_template",
                "subsample", "size", "seed")

#: keys a config file may not set because they let it run code: key -> the only opt-in (issue 27, item 5)
CODE_KEYS = {"trust_remote_code": "the command-line flag 'assay ue --trust-remote-code' (in Python: "
                                  "model_options={'trust_remote_code': True})"}

__all__ = ["CODE_KEYS", "DATASET_KEYS", "FOLDER_KEYS", "MODEL_KEYS", "URL_KEYS", "check_model_sections", "run_seeds"]


def _fail(path: Path, at: str, expected: str, got: Any) -> Exception:
    return ConfigError(f"{path}: {at}: expected {expected}, got {got!r:.120}")


def _int(cfg: dict, key: str, path: Path, at: str, minimum: int) -> None:
    if key in cfg:
        v = cfg[key]
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise _fail(path, f"{at}.{key}", f"an integer >= {minimum}", v)


def _str(cfg: dict, key: str, path: Path, at: str) -> None:
    if key in cfg and not (isinstance(cfg[key], str) and cfg[key]):
        raise _fail(path, f"{at}.{key}", "a non-empty string", cfg[key])


def check_model_sections(cfg: dict, path: Path) -> None:
    """Check ``model``, ``dataset`` and ``seed``; errors are ``ConfigError`` naming the key path."""
    from assay.configfile import check_keys
    from assay_uncertainty.manager.model_loop import GENERATION_PARAMS

    for where in (("model",), ("model", "load_args")):  # before any other check: a config never runs code
        section: Any = cfg
        for key in where:
            section = section.get(key) if isinstance(section, dict) else None
        for key, opt_in in CODE_KEYS.items():
            if isinstance(section, dict) and key in section:
                raise ConfigError(f"{path}: {'.'.join(where + (key,))}: a config file cannot set {key!r} (it would "
                                  f"run the model folder's own code); the only opt-in is {opt_in}")
    if "data" in cfg:
        raise _fail(path, "data", "no 'data' beside 'model' (the model generates the outputs; the prompts come "
                                  "from 'dataset')", cfg["data"])
    for section, keys in (("model", MODEL_KEYS), ("dataset", DATASET_KEYS)):
        if section not in cfg:
            raise _fail(path, section, "this section (a model run needs 'model' and 'dataset')", None)
        if not isinstance(cfg[section], dict):
            raise _fail(path, section, "a mapping of keys", cfg[section])
        check_keys(cfg[section], keys, file=path, path=(section,))
        if "path" not in cfg[section] and not (section == "model" and "url" in cfg[section]):
            raise _fail(path, f"{section}.path", "a path (required)" + (" or a url" if section == "model" else ""),
                        None)
    model, data = cfg["model"], cfg["dataset"]
    _check_url(model, path)
    for key in ("path", "device", "cache_dir"):
        _str(model, key, path, "model")
    if model.get("type", "causal") not in ("causal", "seq2seq"):
        raise _fail(path, "model.type", "causal or seq2seq", model["type"])
    if model.get("dtype", "float32") not in ("float32", "float16", "bfloat16", "float64"):
        raise _fail(path, "model.dtype", "float32, float16, bfloat16 or float64", model["dtype"])
    _check_ensemble(model, path)
    for key in ("load_args", "generation_params"):
        if key in model and not isinstance(model[key], dict):
            raise _fail(path, f"model.{key}", "a mapping", model[key])
    check_keys(model.get("generation_params", {}), GENERATION_PARAMS, file=path, path=("model", "generation_params"),
               what="generation parameter")
    for key in ("batch_size", "max_new_tokens", "samples_n"):
        _int(model, key, path, "model", 1)
    if not isinstance(model.get("ignore_exceptions", False), bool):
        raise _fail(path, "model.ignore_exceptions", "true or false", model["ignore_exceptions"])
    stats = model.get("save_stats", [])
    if not isinstance(stats, list) or not all(isinstance(s, str) for s in stats):
        raise _fail(path, "model.save_stats", "a list of statistic names", stats)
    for key in ("path", "split", "text_column", "label_column", "template", "few_shot_template"):
        _str(data, key, path, "dataset")
    if "template" in data and "{text}" not in data["template"]:
        raise _fail(path, "dataset.template", "a template containing {text}", data["template"])
    for key in ("few_shot", "subsample", "size", "seed"):
        _int(data, key, path, "dataset", 0)
    seeds = cfg.get("seed")
    if seeds is not None:
        seeds = [seeds] if isinstance(seeds, int) and not isinstance(seeds, bool) else seeds
        if not isinstance(seeds, list) or not seeds or not all(
                isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds):
            raise _fail(path, "seed", "an integer >= 0 or a non-empty list of them", cfg["seed"])
        if len(set(seeds)) != len(seeds):
            raise _fail(path, "seed", "distinct seeds (one saved manager each)", cfg["seed"])


def _check_ensemble(model: dict, path: Path) -> None:
    """``ensemble`` (a list of folders) and the keys that apply with it only."""
    if "ensemble" not in model:
        for key in ("ensembling_mode", "ensemble_generation_params"):
            if key in model:
                raise _fail(path, f"model.{key}", "no ensemble setting without 'ensemble' (the other models' folders)",
                            model[key])
        return
    folders = model["ensemble"]
    if not isinstance(folders, list) or not folders or not all(isinstance(f, str) and f for f in folders):
        raise _fail(path, "model.ensemble", "a non-empty list of model folders", folders)
    if model.get("ensembling_mode", "pe") not in ("pe", "ep"):
        raise _fail(path, "model.ensembling_mode", "pe or ep", model["ensembling_mode"])
    params = model.get("ensemble_generation_params", {})
    if not isinstance(params, dict):
        raise _fail(path, "model.ensemble_generation_params", "a mapping", params)
    from assay.configfile import check_keys

    check_keys(params, ("num_beams", "length_penalty"), file=path, path=("model", "ensemble_generation_params"))


def _check_url(model: dict, path: Path) -> None:
    """The keys of a model behind an OpenAI-compatible endpoint (``url``) against those of a folder (``path``)."""
    if "url" not in model:
        for key in URL_KEYS:
            if key in model:
                raise _fail(path, f"model.{key}", f"no {key!r} without 'url' (it is a setting of a model behind an "
                                                  "OpenAI-compatible endpoint)", model[key])
        return
    if "path" in model:
        raise _fail(path, "model.url", "either 'path' (a local model folder) or 'url', not both", model["url"])
    for key in FOLDER_KEYS:
        if key in model:
            raise _fail(path, f"model.{key}", f"no {key!r} with 'url' (it is a setting of a local model folder)",
                        model[key])
    url = model["url"]
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise _fail(path, "model.url", "an http(s) URL", url)
    _str(model, "name", path, "model")
    if "name" not in model:
        raise _fail(path, "model.name", "the model name the server serves (required with 'url')", None)
    if model.get("endpoint", "chat") not in ("chat", "completions"):
        raise _fail(path, "model.endpoint", "chat or completions", model["endpoint"])
    _int(model, "max_retries", path, "model", 0)
    _int(model, "top_logprobs", path, "model", 0)
    t = model.get("timeout", 60)
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not t > 0:
        raise _fail(path, "model.timeout", "a number of seconds > 0", t)
    if not isinstance(model.get("logprobs", False), bool):
        raise _fail(path, "model.logprobs", "true or false", model["logprobs"])
    _str(model, "system_prompt", path, "model")


def records_of(cfg: dict, base: Path) -> list[dict[str, Any]]:
    """The model loop's records from the ``dataset`` section."""
    from assay_uncertainty.manager.prompt_data import load_rows, prompt_records

    d = cfg["dataset"]
    source = base / d["path"]
    rows = load_rows(source, split=d.get("split"))
    opts = {k: d[k] for k in ("label_column", "template", "few_shot", "few_shot_template", "subsample", "size",
                              "seed") if k in d}
    return prompt_records(rows, text_column=d.get("text_column", "input"), source=str(source), **opts)


def run_seeds(cfg: dict, args: Any, base: Path, out: Path, write: Any) -> list[tuple[int | None, Path, Any]]:
    """Run the model once per seed; ``write(man, folder)`` computes, saves and prints each manager."""
    from assay_uncertainty.manager import UEManager
    from assay_uncertainty.manager.model_loop import resolve_model_backend

    m = cfg["model"]
    records = records_of(cfg, base)
    if "url" in m:  # a model behind an OpenAI-compatible endpoint: the openai backend, by name
        from assay.plugins import load_model_backend

        if getattr(args, "trust_remote_code", False):
            raise ConfigError("--trust-remote-code applies to a local model folder (model.path); the config's model "
                              "is a url")
        backend = load_model_backend("openai", model=m["url"], **{k: m[k] for k in URL_KEYS if k in m})
    else:
        options = {k: m[k] for k in FOLDER_KEYS if k in m}
        if "ensemble" in options:  # the other members' folders, relative to the config file as path is
            options["ensemble"] = [str(base / f) for f in options["ensemble"]]
        if getattr(args, "trust_remote_code", False):
            options["trust_remote_code"] = True
        backend = resolve_model_backend(str(base / m["path"]), options)  # loaded once for every seed
    raw = cfg.get("seed")
    seeds: list[int | None] = [None] if raw is None else ([raw] if isinstance(raw, int) else list(raw))
    done = []
    for seed in seeds:
        folder = out if seed is None else out / f"seed-{seed}"
        cache = None if "cache_dir" not in m else base / m["cache_dir"] if seed is None else \
            base / m["cache_dir"] / f"seed-{seed}"
        # the run's seed seeds its sampling and its resampling; without seed: in the config, --seed gives it
        run_seed = seed if seed is not None else getattr(args, "seed", None)
        man = UEManager(records, estimators=cfg["estimators"], gen_metrics=cfg["gen_metrics"],
                        ue_metrics=args.metric or cfg["ue_metrics"], nan_policy=cfg.get("nan_policy", "drop"),
                        n_resamples=args.n_resamples, confidence_level=args.confidence_level,
                        model=backend, batch_size=m.get("batch_size", 1),
                        max_new_tokens=m.get("max_new_tokens", 100), samples_n=m.get("samples_n", 10),
                        generation_params=m.get("generation_params"), seed=run_seed,
                        ignore_exceptions=m.get("ignore_exceptions", False), save_stats=m.get("save_stats", ()),
                        cache_dir=cache)
        if seed is not None:
            print(f"## seed {seed}\n")
        write(man, folder)
        done.append((seed, folder, man))
    return done
