"""recipecli's side of the draft comparison, and the field-by-field comparison itself.

:func:`recipecli_side` runs ``recipecli check TARGET DRAFT --engine vllm --json --kernel skip``
(the public interface) and keeps what it says about vLLM; :func:`compare` lists the fields on
which it and :func:`vllm_probe.probe_pair` disagree. No torch, no vLLM.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

#: probe ``resolved`` key == recipecli ``resolved.vllm`` key, compared as values.
FIELDS = (
    "H",
    "Ht",
    "V",
    "Vd",
    "k",
    "fc_in",
    "nh",
    "nkv",
    "hd",
    "I",
    "layers",
    "eps",
    "use_aux",
    "norm_before_fc",
    "fc_norm",
    "norm_output",
    "norm_before_residual",
    "architecture",
    "model_class",
    "target_class",
    "aux_layers",
)
#: every compared field, in report order
ALL_FIELDS = ("verdict",) + FIELDS


def recipecli_side(target: Path, draft: Path) -> dict[str, Any]:
    """What ``recipecli check --engine vllm`` says about a pair.

    Returns:
        ``{"ok": bool | None, "errors": [codes], "warnings": [codes], "resolved": {field: value},
        "exit": int, "stderr": str}``; ``ok`` is READY at TP 1 for vLLM (None when check exited
        without JSON).
    """
    cmd = [sys.executable, "-m", "recipecli", "check", str(target), str(draft)]
    cmd += ["--engine", "vllm", "--json", "--kernel", "skip", "--tp", "1"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    out: dict[str, Any] = {
        "ok": None,
        "errors": [],
        "warnings": [],
        "resolved": {},
        "exit": proc.returncode,
        "stderr": proc.stderr.strip()[-500:],
    }
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return out
    eng = (data.get("engines") or {}).get("vllm") or {}
    out["ok"] = bool(eng.get("ready")) and 1 in (eng.get("ready_tp") or [])
    for f in data.get("findings") or []:
        if f.get("engine") not in ("vllm", "any", None):
            continue
        if f.get("severity") == "error":
            out["errors"].append(f.get("code"))
        elif f.get("severity") == "warning":
            out["warnings"].append(f.get("code"))
    resolved = (data.get("resolved") or {}).get("vllm") or {}
    for key, entry in resolved.items():
        out["resolved"][key] = entry.get("value") if isinstance(entry, dict) else entry
    return out


def vllm_ok(probe: dict[str, Any]) -> bool | None:
    """vLLM's verdict as a bool: True only when the draft loads with every weight it needs."""
    if probe["verdict"] == "not_probed":
        return None
    return probe["verdict"] == "loads"


def _norm(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return value


def compare(probe: dict[str, Any], rc: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Fields on which vLLM and recipecli disagree: ``{field: (vllm_value, recipecli_value)}``.

    ``verdict`` compares :func:`vllm_ok` with recipecli's READY at TP 1. A resolved field is
    compared only when vLLM reached it (an earlier step raised otherwise); recipecli not
    reporting a field vLLM resolved is a disagreement (value ``None``).
    """
    diff: dict[str, tuple[Any, Any]] = {}
    if not rc["resolved"] and rc["ok"] is False:
        # recipecli refused to model the draft (e.g. draft.not_eagle3): compare the verdict only
        probe = {**probe, "resolved": {}}
    ok = vllm_ok(probe)
    if ok is not None and ok != rc["ok"]:
        v = probe["verdict"]
        if probe.get("error"):
            v += f" ({probe['error']['stage']}: {probe['error']['type']}: {probe['error']['message'][:160]})"
        elif probe.get("missing"):
            v += f" (missing {', '.join(probe['missing'])})"
        elif probe.get("ignored"):
            v += f" ({'; '.join(probe['ignored'])})"
        r = "READY" if rc["ok"] else f"not ready ({', '.join(rc['errors']) or 'no error code'})"
        diff["verdict"] = (v, r)
    for key in FIELDS:
        if key not in probe["resolved"]:
            continue
        vv = _norm(probe["resolved"][key])
        rv = _norm(rc["resolved"].get(key))
        if key == "eps" and isinstance(vv, float) and isinstance(rv, float):
            if abs(vv - rv) <= 1e-12:
                continue
        if vv != rv:
            diff[key] = (vv, rv)
    return diff
