"""What ``recipecli diff`` finds: the changes between two commands (:class:`CommandDiff`, one
:class:`Change` per difference, :class:`KeyChange` inside structured flag values), the
:class:`Side` each command came from, and :class:`AllDiff` for ``--what all``. Each has the
``to_dict`` of the ``--json`` output."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class KeyChange:
    """One leaf-level difference inside a structured flag value.

    Attributes:
        op: ``added``, ``removed``, ``changed`` or ``moved``.
        path: key path in B (in A for ``removed``); list indices are not descended into.
        a: the value in A (None for ``added``).
        b: the value in B (None for ``removed``).
        from_path: for ``moved``, the key path in A.
    """

    op: str
    path: tuple[str, ...]
    a: Any = None
    b: Any = None
    from_path: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "path": list(self.path)}
        if self.from_path is not None:
            out["from_path"] = list(self.from_path)
        if self.op != "added":
            out["a"] = self.a
        if self.op != "removed":
            out["b"] = self.b
        return out


@dataclass(frozen=True)
class Change:
    """One difference between the two commands.

    Attributes:
        kind: ``command`` (head item: program, subcommand, model), ``env`` or ``flag``.
        op: ``added``, ``removed`` or ``changed``.
        name: flag long name (``--port``), env var name, or head role (``program``, ``model``).
        a: value in A (text; ``True`` for a bare flag; None when absent).
        b: value in B.
        keys: for structured values (JSON, ``k=v`` lists), the leaf-level differences.
        meaning: across engines, what the flag sets when the engines' entries say
            (``max_model_len``, ``speculative.num_speculative_tokens``); ``name`` is then its
            spelling on each side (``--max-model-len / --context-length``).
    """

    kind: str
    op: str
    name: str
    a: Any = None
    b: Any = None
    keys: tuple[KeyChange, ...] = ()
    meaning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "op": self.op, "name": self.name}
        if self.meaning is not None:
            out["meaning"] = self.meaning
        if self.op != "added":
            out["a"] = self.a
        if self.op != "removed":
            out["b"] = self.b
        if self.keys:
            out["keys"] = [k.to_dict() for k in self.keys]
        return out


@dataclass(frozen=True)
class Side:
    """What one side of the diff is: recipe name, engine, hardware profile and command."""

    recipe: str
    engine: str
    hardware: str | None
    what: str
    sets: tuple[str, ...] = ()

    def label(self) -> str:
        hw = f", {self.hardware}" if self.hardware else ""
        sets = "".join(f" --set {s}" for s in self.sets)
        return f"{self.recipe} ({self.engine}{hw}) {self.what}{sets}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "recipe": self.recipe,
            "engine": self.engine,
            "hardware": self.hardware,
            "what": self.what,
            "sets": list(self.sets),
        }


@dataclass(frozen=True)
class CommandDiff:
    """The semantic diff of two commands.

    Attributes:
        a, b: the two sides.
        changes: every difference: command head first, then env, then flags (removed, changed,
            added; each in the order the flags appear in A, then B).
        unchanged_flags: flags equal on both sides (count only matters for the summary).
    """

    a: Side
    b: Side
    changes: tuple[Change, ...] = field(default_factory=tuple)
    unchanged_flags: tuple[str, ...] = ()

    @property
    def identical(self) -> bool:
        return not self.changes

    def of(self, kind: str, op: str | None = None) -> list[Change]:
        """Changes of ``kind`` (and ``op`` when given)."""
        return [c for c in self.changes if c.kind == kind and (op is None or c.op == op)]

    def summary(self) -> dict[str, int]:
        """Counts: flags added/removed/changed, env added/removed/changed, unchanged flags."""
        out = {
            f"{kind}_{op}": len(self.of(kind, op))
            for kind in ("flag", "env")
            for op in ("added", "removed", "changed")
        }
        out["command_changed"] = len(self.of("command"))
        out["flags_unchanged"] = len(self.unchanged_flags)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
            "identical": self.identical,
            "summary": self.summary(),
            "changes": [c.to_dict() for c in self.changes],
            "unchanged_flags": list(self.unchanged_flags),
        }


@dataclass(frozen=True)
class AllDiff:
    """``diff --what all``: one :class:`CommandDiff` per command either recipe renders.

    Attributes:
        diffs: serve, then bench and eval when either side has that section; a section only one
            side has is one ``command`` change (``added``/``removed``, name = the section).
    """

    diffs: tuple[CommandDiff, ...]

    @property
    def identical(self) -> bool:
        return all(d.identical for d in self.diffs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "what": "all",
            "identical": self.identical,
            "diffs": [d.to_dict() for d in self.diffs],
        }
