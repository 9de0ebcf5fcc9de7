"""Shipped flag catalogs per engine (``recipecli/engines/<engine>/data/<engine>-<pin>-flags.json``) and "did
you mean".

Each catalog is written by a script from the engine's own argument definitions at its pin (the
file name derives from :attr:`recipecli.engines.spec.Pin.catalog_file`):

* vLLM: ``scripts/build_vllm_flag_catalog.py``, ``ast`` over the wheel's
  ``vllm/engine/arg_utils.py``, the frontend ``cli_args.py``, ``vllm/benchmarks/serve.py`` and
  ``vllm/envs.py``;
* tokenspeed: the ``tokenspeed serve`` flags recipes use, with their types, choices and switches
  read from ``python/tokenspeed/runtime/utils/server_args.py`` ``ServerArgs.add_cli_args``;
* SGLang: ``scripts/build_sglang_flag_catalog.py``, ``ast`` over the wheel's
  ``sglang/srt/server_args.py`` ``ServerArgs.add_cli_args`` (the
  ``sglang/srt/arg_groups/fields/*.py`` fields it registers, plus its literal ``add_argument``
  calls).

Every flag entry has a ``kind`` (how it is written) and a ``type`` (what value it takes:
``str``, ``int``, ``float``, ``json``, ``json_or_str``, ``optional``, ``switch``), with ``choices``
and ``nargs`` where the engine declares them; ``recipecli render --set`` types values by it.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any


@dataclass(frozen=True)
class Catalog:
    """One engine's flags.

    Attributes:
        engine: the engine's registry name.
        version: engine version the catalog describes.
        commands: command (``serve``, ``bench serve``) -> {flag: {"kind": ..., "type": ...}};
            kinds: ``value``, ``json``, ``bool`` (also ``--no-x``), ``flag`` (bare),
            ``optional``, ``negation`` (``negates``: the positive flag); ``alias_of`` names the
            canonical flag; ``type``/``choices``/``nargs`` as in the module docstring.
        removed: flag -> {"last_seen_in": version, "hint": what to use instead}.
        env: env var names the engine reads (vLLM: ``vllm/envs.py``), sorted.
        path: the catalog file.
    """

    engine: str
    version: str
    commands: Mapping[str, Mapping[str, Mapping[str, Any]]]
    removed: Mapping[str, Mapping[str, Any]]
    env: tuple[str, ...]
    path: str

    def flags(self, command: str = "serve") -> Mapping[str, Mapping[str, Any]]:
        """The flags of ``command`` (empty when the catalog does not describe it)."""
        return self.commands.get(command, {})

    def kind(self, flag: str, command: str = "serve") -> str | None:
        """The kind of ``flag`` or None when unknown."""
        entry = self.flags(command).get(flag)
        return None if entry is None else entry.get("kind")

    def value_type(self, flag: str, command: str = "serve") -> str | None:
        """The value ``type`` of ``flag`` (``str``, ``int``, ``float``, ``json``, ``switch``,
        …) or None when unknown."""
        entry = self.flags(command).get(flag)
        return None if entry is None else entry.get("type")

    def canonical(self, flag: str, command: str = "serve") -> str:
        """The canonical name of ``flag`` (its ``alias_of``), else itself."""
        entry = self.flags(command).get(flag) or {}
        return str(entry.get("alias_of", flag))

    def suggest(self, flag: str, command: str = "serve") -> str | None:
        """Closest known flag to a misspelt ``flag`` (difflib, cutoff 0.75), or None."""
        close = difflib.get_close_matches(flag, list(self.flags(command)), n=1, cutoff=0.75)
        return close[0] if close else None

    def suggest_env(self, name: str) -> str | None:
        """Closest known env var to ``name``, or None."""
        close = difflib.get_close_matches(name, list(self.env), n=1, cutoff=0.8)
        return close[0] if close else None


@functools.cache
def load_catalog(engine: str) -> Catalog:
    """Load the shipped catalog of ``engine``.

    Args:
        engine: a registered engine name.

    Returns:
        the :class:`Catalog` (cached).

    Raises:
        UsageError: ``engine`` is not registered.
    """
    from recipecli.engines import engine_spec

    spec = engine_spec(engine)
    path = resources.files(spec.home) / "data" / spec.pin.catalog_file
    data = json.loads(path.read_text(encoding="utf-8"))
    return Catalog(
        engine=data["engine"],
        version=data["version"],
        commands=data["commands"],
        removed=data.get("removed", {}),
        env=tuple(data.get("env", ())),
        path=str(path),
    )
