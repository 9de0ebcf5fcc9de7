"""Argv of the commands of one resolved recipe (:class:`~.resolve.Resolved`): ``<engine> serve``,
``vllm bench serve`` against it, lm-eval against it, and the :class:`Rendered` record of each.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import recipecli.recipes.engines as E
from recipecli.engines import engine_spec
from recipecli.errors import RecipeError
from recipecli.findings import Finding
from recipecli.recipes.resolve import Resolved
from recipecli.recipes.values import flag_argv, json_text, scalar_text, serve_flag_argv


@dataclass(frozen=True)
class Rendered:
    """One rendered command.

    Attributes:
        what: ``serve``, ``bench`` or ``eval``.
        engine: ``vllm``, ``tokenspeed`` or ``sglang``.
        hardware: the hardware profile used, or None.
        env: environment to export before the command (name -> value), in order.
        argv: the command as an argv list (no shell involved).
        flags: for ``serve``, the merged (flag, typed value) pairs in output order (``True`` =
            bare flag, mappings = JSON); used by ``--format vllm-config``.
        head: number of argv items on the first shell line (program + subcommands + model).
        warnings: non-fatal findings (text overrides absent from the config, …).
        point: for one command of a bench sweep, ``NAME=VALUE`` of its sweep point; else ``""``.
        target, draft: the target and draft SOURCEs the command serves or measures (after
            ``--set target=`` / ``--set draft=``; ``""`` when not known).
    """

    what: str
    engine: str
    hardware: str | None
    env: dict[str, str]
    argv: list[str]
    flags: tuple[tuple[str, Any], ...] = ()
    head: int = 0
    warnings: tuple[Finding, ...] = field(default_factory=tuple)
    point: str = ""
    target: str = ""
    draft: str = ""

    def to_dict(self) -> dict[str, Any]:
        """``{"env": ..., "argv": ...}`` (the ``argv-json`` format)."""
        return {"env": dict(self.env), "argv": list(self.argv)}


def _endpoint(flags: Mapping[str, Any], engine: str) -> tuple[str, str]:
    host = flags.get("--host")
    host = E.CLIENT_HOST if host is None or str(host) in E.WILDCARD_HOSTS else str(host)
    port = scalar_text(flags.get("--port", engine_spec(engine).default_port))
    return host, port


def _serve_head(engine: str) -> int:
    """How many argv words come before the flags: the serve command, the model flag, the target."""
    spec = engine_spec(engine)
    return len(spec.serve_command) + 1 + (spec.model_flag is not None)


def served_model(res: Resolved) -> str:
    """The model name clients must send: ``--served-model-name`` (first) or the target."""
    name = res.flags.get("--served-model-name")
    if isinstance(name, list) and name:
        return str(name[0])
    return str(name) if name not in (None, True) else res.target


def serve_argv(res: Resolved) -> list[str]:
    """``<engine> serve TARGET`` (SGLang: ``python -m sglang.launch_server --model-path
    TARGET``) + the merged flags."""
    spec = engine_spec(res.engine)
    model_flag = spec.model_flag
    argv = [*spec.serve_command, *([model_flag] if model_flag else []), res.target]
    for flag, value in res.flags.items():
        argv.extend(serve_flag_argv(res.engine, flag, value))
    return argv


# bench keys that describe the workload but that `vllm bench serve` does not save in its result
# JSON (vllm v0.33.0 vllm/benchmarks/serve.py main: it saves backend, label, model_id,
# tokenizer_id, num_prompts, request_rate, burstiness, max_concurrency, then every --metadata
# KEY=VALUE as a top-level string). recipecli records them with --metadata so `recipecli report`
# can match workloads exactly (docs/engines/vllm.md#bench-serve).
WORKLOAD_PREFIXES: tuple[str, ...] = (
    "dataset_",
    "random_",
    "sharegpt_",
    "sonnet_",
    "hf_",
    "prefix_repetition_",
    "spec_bench_",
    "speed_bench_",
    "custom_",
    "blazedit_",
    "bfcl_",
    "asr_",
    "timed_trace_",
)


WORKLOAD_KEYS: frozenset[str] = frozenset(
    {
        "input_len",
        "output_len",
        "ignore_eos",
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "frequency_penalty",
        "presence_penalty",
        "repetition_penalty",
        "seed",
        "num_warmups",
        "disable_shuffle",
        "no_oversample",
    }
)

#: Flags recipecli adds to every rendered bench command unless the recipe or --set gives them
#: (``--save-result`` also not when ``--append-result`` is given: vLLM saves the result with
#: either, vllm v0.33.0 vllm/benchmarks/serve.py main).
RECORDING_FLAGS: tuple[str, ...] = ("--label", "--save-result", "--result-filename", "--metadata")

#: ``vllm bench serve`` switches that make it write the result JSON (v0.33.0
#: vllm/benchmarks/serve.py main: ``if args.save_result or args.append_result``; without one,
#: ``--result-filename`` and ``--result-dir`` are read for nothing and no file is written).
SAVE_FLAGS: tuple[str, ...] = ("--save-result", "--append-result")


def bench_label(res: Resolved) -> str:
    """``RECIPE-ENGINE[-HARDWARE]``: the ``--label`` of the rendered bench command."""
    return "-".join(p for p in (res.recipe.name, res.engine, res.hardware) if p)


def _metadata_items(res: Resolved, flags: Mapping[str, Any]) -> list[str]:
    items = [f"recipe={res.recipe.name}", f"engine={res.engine}"]
    if res.hardware:
        items.append(f"hardware={res.hardware}")
    for flag, value in flags.items():
        key = flag[2:].replace("-", "_")
        if value is None or value is False:
            continue
        if key.startswith(WORKLOAD_PREFIXES) or key in WORKLOAD_KEYS:
            text = (
                "true"
                if value is True
                else json_text(value)
                if isinstance(value, (Mapping, list))
                else scalar_text(value)
            )
            items.append(f"{key}={text}")
    return items


def bench_argv(res: Resolved, values: Mapping[str, Any] | None = None) -> list[str]:
    """``vllm bench serve`` against the served endpoint (docs/engines/vllm.md#bench-serve).

    Order: ``--backend``, ``--base-url``, ``--model``, the recipe's ``bench`` keys in order
    (``--set`` bench values replace them in place, new ones follow), then — unless given —
    ``--label RECIPE-ENGINE[-HW]``, ``--save-result`` (unless a :data:`SAVE_FLAGS` switch is
    given, set or unset), ``--result-filename LABEL-cN.json`` (``N`` = max concurrency, else
    ``-rRATE``; vLLM writes it under ``--result-dir`` when that is given, else in the current
    directory) and ``--metadata KEY=VALUE …`` recording the recipe, engine, hardware and the
    workload keys vLLM does not save itself (:data:`WORKLOAD_PREFIXES`, :data:`WORKLOAD_KEYS`).

    Args:
        res: the resolved recipe.
        values: extra flag -> value overrides on top of ``res.bench`` (one sweep point).

    Raises:
        RecipeError: the recipe has no bench section.
    """
    bench: Mapping[str, Any] = res.recipe.get("bench")
    if bench is None:
        raise RecipeError("recipe has no bench section", path=res.recipe.path)
    host, port = _endpoint(res.flags, res.engine)
    flags: dict[str, Any] = {}
    for key, value in bench.items():
        if key != "base_url":
            flags["--" + key.replace("_", "-")] = value
    for flag, value in {**res.bench, **(values or {})}.items():
        flags[flag] = value
    base_url = flags.pop("--base-url", None) or bench.get("base_url") or f"http://{host}:{port}"
    model = flags.pop("--model", None) or served_model(res)
    backend = flags.pop("--backend", None)
    ordered: dict[str, Any] = {}
    if backend is not None:
        ordered["--backend"] = backend
    ordered["--base-url"] = base_url
    ordered["--model"] = model
    ordered.update(flags)
    if "--label" not in ordered:
        ordered["--label"] = bench_label(res)
    if not any(f in ordered for f in SAVE_FLAGS):
        ordered["--save-result"] = True
    if "--result-filename" not in ordered:
        mc = ordered.get("--max-concurrency")
        rate = ordered.get("--request-rate")
        tail = (
            f"-c{scalar_text(mc)}"
            if mc not in (None, False)
            else (f"-r{scalar_text(rate)}" if rate not in (None, False) else "")
        )
        ordered["--result-filename"] = f"{ordered['--label'] or bench_label(res)}{tail}.json"
    metadata = ordered.pop("--metadata", None)
    argv = list(E.bench_command())
    for flag, value in ordered.items():
        argv.extend(flag_argv(flag, value))
    if metadata is None:
        argv.extend(["--metadata", *_metadata_items(res, ordered)])
    elif metadata is not False:
        argv.extend(["--metadata", *(metadata if isinstance(metadata, list) else [str(metadata)])])
    return argv


def _kv_list(mapping: Mapping[str, Any]) -> str:
    return ",".join(
        f"{k}={scalar_text(v).lower() if isinstance(v, bool) else scalar_text(v)}"
        for k, v in mapping.items()
    )


def eval_argv(res: Resolved) -> tuple[list[str], int]:
    """lm-eval against the endpoint: ``--model`` type matches the endpoint
    (``local-chat-completions`` with ``/v1/chat/completions``: EleutherAI/lm-evaluation-harness#3125).

    Returns:
        (argv, number of launcher items).
    """
    ev: Mapping[str, Any] = res.recipe.get("eval")
    if ev is None:
        raise RecipeError("recipe has no eval section", path=res.recipe.path)
    launcher = list(ev.get("launcher") or ["lm_eval"])
    endpoint = ev.get("endpoint", "/v1/chat/completions")
    host, port = _endpoint(res.flags, res.engine)
    model_args = {
        "model": served_model(res),
        "base_url": ev.get("base_url") or f"http://{host}:{port}{endpoint}",
        "tokenizer": ev.get("tokenizer") or res.target,
        **(ev.get("model_args") or {}),
    }
    argv = [
        *launcher,
        "--model",
        E.LM_EVAL_MODEL_TYPE[endpoint],
        "--model_args",
        _kv_list(model_args),
    ]
    skip = {"launcher", "endpoint", "base_url", "tokenizer", "model_args"}
    for key, value in ev.items():
        if key in skip:
            continue
        if isinstance(value, Mapping):
            value = _kv_list(value)
        argv.extend(flag_argv("--" + key, value))
    return argv, len(launcher)


def rendered_commands(res: Resolved, what: str) -> list[Rendered]:
    """The :class:`Rendered` commands of ``what`` (``serve``, ``bench``: one per sweep point, or
    ``eval``) for ``res``."""
    engine = res.engine
    if what == "serve":
        return [
            Rendered(
                "serve",
                engine,
                res.hardware,
                res.env,
                serve_argv(res),
                tuple(res.flags.items()),
                _serve_head(engine),
                res.warnings,
                target=res.target,
                draft=res.draft,
            )
        ]
    if what == "bench":
        if res.sweep is None:
            argv = bench_argv(res)
            return [
                Rendered("bench", engine, res.hardware, {}, argv, head=3, warnings=res.warnings)
            ]
        flag, values = res.sweep
        return [
            Rendered(
                "bench",
                engine,
                res.hardware,
                {},
                bench_argv(res, {flag: v}),
                head=3,
                warnings=res.warnings,
                point=f"{flag[2:].replace('-', '_')}={scalar_text(v)}",
            )
            for v in values
        ]
    argv, head = eval_argv(res)
    return [Rendered("eval", engine, res.hardware, {}, argv, head=head, warnings=res.warnings)]
