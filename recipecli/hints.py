"""The install and download hints recipecli prints, in one place.

recipecli is installed from a clone (README, "Set-up"): optional features come with an extra of
that editable install, ``pip install -e ".[kernels]"`` run in the clone. Hub repos are
downloaded with the ``hf`` command that huggingface_hub (a recipecli dependency) installs (the
older ``*-cli`` name is deprecated there).
"""

from __future__ import annotations

#: Extras of ``pyproject.toml`` and what they add.
EXTRAS: dict[str, str] = {"kernels": "torch, triton", "plot": "matplotlib"}

#: ``hf download`` of a repo into a directory (huggingface_hub's ``hf`` CLI).
HF_DOWNLOAD = "hf download REPO --local-dir DIR"


def install_hint(extra: str) -> str:
    """``pip install -e ".[kernels]" (in the recipecli clone)``: README's install plus ``extra``.

    Raises:
        KeyError: ``extra`` is not an extra of recipecli (:data:`EXTRAS`).
    """
    EXTRAS[extra]  # noqa: B018 (an unknown extra is a bug, not a hint)
    return f'pip install -e ".[{extra}]" (in the recipecli clone)'
