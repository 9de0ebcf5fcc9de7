"""The kernel-verification cache: one file per verified (dtype, widths, eps, device, token counts,
kernel source, triton/torch/numpy versions), so that ``check`` answers from an earlier
verification of the same norms in milliseconds instead of re-running the kernels.

Where: ``$XDG_CACHE_HOME/recipecli/kernelcheck/`` (an absolute ``XDG_CACHE_HOME``, as the XDG
base-directory spec asks), else ``~/.cache/recipecli/kernelcheck/``; never inside the repository.
An unwritable or unreadable cache is not an error: a result that cannot be stored is simply not
cached, and a file that is not a valid entry for its key (truncated, edited, from another
version of this module) is a miss.

Nothing here imports triton, torch or numpy: versions come from the installed distributions'
metadata and the kernel source hash from the files of :mod:`recipecli.kernels`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recipecli.kernelcheck.cases import CaseResult
from recipecli.kernelcheck.norms import DraftNorms

#: Version of the entry layout; an entry of another version is a miss.
ENTRY_VERSION = 1
#: Largest entry file read (bytes): a few dozen cases take ~20 KB.
MAX_ENTRY_BYTES = 1 << 20
#: Distributions whose versions are part of the key (absent ones as null).
VERSIONED = ("triton", "torch", "numpy")


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/recipecli/kernelcheck`` when ``XDG_CACHE_HOME`` is an absolute path,
    else ``~/.cache/recipecli/kernelcheck`` (nothing is created here)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "recipecli" / "kernelcheck"


def kernel_source_hash() -> str:
    """SHA-256 (hex, first 16 digits) over the names and bytes of every ``.py`` file of
    :mod:`recipecli.kernels` (read, not imported): any edit of a kernel, its launcher, guards
    or references invalidates every cached verification. ``"unknown"`` when the package is
    not installed."""
    spec = importlib.util.find_spec("recipecli.kernels")
    roots = list(spec.submodule_search_locations or ()) if spec is not None else []
    if not roots:
        return "unknown"
    digest = hashlib.sha256()
    for path in sorted(Path(roots[0]).glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _version(dist: str) -> str | None:
    """The installed version of the distribution that provides the top-level package ``dist``
    (triton, torch, numpy), or None: from the name of its ``.dist-info`` folder beside the
    package when there is exactly one (a few ms: nothing imported), else from
    :mod:`importlib.metadata` (tens of ms to import)."""
    spec = importlib.util.find_spec(dist)
    if spec is None:
        return None
    where = spec.origin or next(iter(spec.submodule_search_locations or ()), None)
    if where is not None:
        site = Path(where).parent.parent if spec.submodule_search_locations else Path(where).parent
        found = list(site.glob(f"{dist}-*.dist-info"))
        if len(found) == 1:
            return found[0].name[len(dist) + 1 : -len(".dist-info")]
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class CacheKey:
    """What a cached verification holds for: the norms' dtype (torch name), widths (layer 0's
    pair, the ``fc_norm`` chunks) and eps, the device (``cpu``: Triton's interpreter; ``cuda``),
    the token counts N, the kernel source hash and the triton/torch/numpy versions."""

    dtype: str
    layer0: tuple[int, ...]
    fc_norm: tuple[int, ...]
    eps: float
    device: str
    tokens: tuple[int, ...]
    kernel: str
    versions: tuple[tuple[str, str | None], ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "dtype": self.dtype,
            "layer0": list(self.layer0),
            "fc_norm": list(self.fc_norm),
            "eps": self.eps,
            "device": self.device,
            "tokens": list(self.tokens),
            "kernel": self.kernel,
            "versions": dict(self.versions),
        }

    @property
    def digest(self) -> str:
        """SHA-256 of the key's canonical JSON (the entry's file name)."""
        text = json.dumps([ENTRY_VERSION, self.to_dict()], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def describe(self) -> str:
        """``bfloat16, widths 4096+4096, eps 1e-05`` (what the messages name)."""
        widths = "+".join(map(str, self.layer0)) or "none"
        fc = f", fc_norm {len(self.fc_norm)}x{self.fc_norm[0]}" if self.fc_norm else ""
        return f"{self.dtype}, widths {widths}{fc}, eps {self.eps:g}"


def cache_key(norms: DraftNorms, device: str, tokens: Sequence[int]) -> CacheKey:
    """The :class:`CacheKey` of verifying ``norms`` on ``device`` at ``tokens``."""
    return CacheKey(
        dtype=norms.dtype,
        layer0=tuple(w.width for w in norms.layer0 or ()),
        fc_norm=tuple(w.width for w in norms.fc_norm),
        eps=float(norms.eps),
        device=device,
        tokens=tuple(tokens),
        kernel=kernel_source_hash(),
        versions=tuple((d, _version(d)) for d in VERSIONED),
    )


@dataclass(frozen=True)
class CachedRun:
    """A verification read back: its cases, when it ran (UTC, ``YYYY-MM-DD HH:MM UTC``) and the
    draft it ran on."""

    cases: tuple[CaseResult, ...]
    created: str
    source: str


def _case(d: dict[str, Any]) -> CaseResult:
    """A :class:`CaseResult` from its ``to_dict`` form (KeyError/TypeError when not one)."""
    head = ("kind", "convention", "n", "widths", "dtype", "launched", "path", "guards")
    metrics = {k: v for k, v in d.items() if k not in head}
    if not isinstance(metrics["passed"], bool) or not isinstance(d["guards"], dict):
        raise TypeError("not a case")
    return CaseResult(
        str(d["kind"]), str(d["convention"]), int(d["n"]), tuple(int(w) for w in d["widths"]),
        str(d["dtype"]), metrics, d["guards"], bool(d["launched"]), str(d["path"]),
    )  # fmt: skip


def load(key: CacheKey) -> CachedRun | None:
    """The cached verification for ``key``, or None (no entry, unreadable, too large, not
    valid JSON, or not an entry for exactly this key)."""
    path = cache_dir() / f"{key.digest}.json"
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_ENTRY_BYTES + 1)
        if len(raw) > MAX_ENTRY_BYTES:
            return None
        doc = json.loads(raw)
        if doc.get("version") != ENTRY_VERSION or doc.get("key") != key.to_dict():
            return None
        cases = tuple(_case(c) for c in doc["cases"])
        return CachedRun(cases, str(doc["created"]), str(doc["source"])) if cases else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def store(key: CacheKey, cases: Sequence[CaseResult], source: str) -> Path | None:
    """Write the verification of ``key`` (temporary file in the cache directory, then rename:
    a reader sees the old entry or the new one, never half of one). Returns the entry's path,
    or None when the cache cannot be written (not an error)."""
    folder = cache_dir()
    doc = {
        "version": ENTRY_VERSION,
        "key": key.to_dict(),
        "created": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "source": source,
        "cases": [c.to_dict() for c in cases],
    }
    import tempfile

    tmp = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".entry-", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, allow_nan=False)
        path = folder / f"{key.digest}.json"
        os.replace(tmp, path)
        return path
    except (OSError, ValueError):
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return None
