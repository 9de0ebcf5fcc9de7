"""The wheel carries templates/, kernels/ (as recipecli.kernels), recipes and examples; no bare
top-level `kernels` module is installed."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


# building the wheel takes 5-10 s
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        pytest.fail(f"building the wheel failed:\n{proc.stderr[-2000:]}")
    (whl,) = out.glob("recipecli-*.whl")
    return whl


@pytest.fixture(scope="module")
def wheel_names(wheel) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        return set(zf.namelist())


def test_wheel_console_script_and_every_command_module(wheel, wheel_names):
    # pyproject's [project.scripts]: `recipecli` runs recipecli.cli:main; the group imports each
    # command by module name (recipecli/cli/app.py COMMANDS), so a module missing from the
    # wheel would fail only when that command runs
    from recipecli.cli import COMMANDS

    with zipfile.ZipFile(wheel) as zf:
        (ep,) = [n for n in zf.namelist() if n.endswith(".dist-info/entry_points.txt")]
        entry_points = zf.read(ep).decode()
    # the console script enters through recipecli.__main__ (Ctrl-C while the CLI imports: 130)
    assert "recipecli = recipecli.__main__:main" in entry_points.splitlines()
    assert "recipecli/__main__.py" in wheel_names
    for module, _, _ in COMMANDS.values():
        assert f"recipecli/cli/commands/{module}.py" in wheel_names


def test_wheel_has_kernels_templates_and_data(wheel_names):
    assert "recipecli/kernels/__init__.py" in wheel_names
    assert any(
        n.startswith("recipecli/kernels/") and n.endswith(".py") and "__init__" not in n
        for n in wheel_names
    )
    assert any(n.startswith("recipecli/templates/") and n.endswith(".j2") for n in wheel_names)
    assert "recipecli/data/examples/llama3.1-8b-instruct.target.json" in wheel_names
    assert "recipecli/data/examples/eagle3-llama3.1-instruct-8b.draft.json" in wheel_names
    assert "recipecli/data/recipes/minimax-m3-eagle3.yaml" in wheel_names


def test_wheel_has_every_engine_folders_data(wheel_names):
    # each engine folder ships its extracted data and flag catalog, named from its pin
    # (recipecli/engines/<engine>/data/); transformers' defaults are shared data
    from recipecli.engines import engine_specs

    for spec in engine_specs():
        folder = spec.home.replace(".", "/") + "/data/"
        assert folder + spec.pin.data_file in wheel_names
        assert folder + spec.pin.catalog_file in wheel_names
        assert f"recipecli/data/transformers/{spec.pin.transformers_file}" in wheel_names


def test_wheel_installs_no_top_level_kernels_or_templates(wheel_names):
    tops = {n.split("/")[0] for n in wheel_names}
    assert "kernels" not in tops and "templates" not in tops
    assert {t for t in tops if not t.endswith(".dist-info")} == {"recipecli"}


def test_editable_install_maps_kernels_inside_package():
    code = "import recipecli.kernels, recipecli.templates, importlib.util; print(importlib.util.find_spec('kernels') is None or 'site-packages' in (importlib.util.find_spec('kernels').origin or ''))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True"


def test_every_package_is_listed_for_the_wheel():
    # [tool.setuptools] packages is an explicit list (kernels/ and templates/ are mapped into the
    # package from the repository root); a package missing from it is missing from the wheel
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    listed = set(
        tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    on_disk = {
        ".".join(p.parent.relative_to(REPO).parts)
        for p in (REPO / "recipecli").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert on_disk - listed == set()
    assert listed - on_disk == {"recipecli.kernels", "recipecli.templates"}
