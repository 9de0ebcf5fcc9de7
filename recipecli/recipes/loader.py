"""Load recipe YAML safely: size-limited, ``safe_load`` semantics, aliases and duplicate keys
refused, every error naming the file and line.

A recipe is found by path (``my.yaml``) or by the name of a bundled recipe
(``recipecli/data/recipes/<name>.yaml``, e.g. ``minimax-m3-eagle3``).
"""

from __future__ import annotations

import difflib
import errno
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from recipecli.errors import RecipeError
from recipecli.recipes.schema import validate
from recipecli.safeio import check_yaml_limits, file_kind

MAX_RECIPE_BYTES = 256 * 1024
"""Largest recipe file accepted (bytes); real recipes are a few KiB."""


def bundled_dir() -> Path:
    """Directory of the bundled recipes (``recipecli/data/recipes``)."""
    return Path(str(resources.files("recipecli.data"))) / "recipes"


def bundled_names() -> list[str]:
    """Names of the bundled recipes, sorted."""
    return sorted(p.stem for p in bundled_dir().glob("*.yaml"))


@dataclass(frozen=True)
class Recipe:
    """A validated recipe.

    Attributes:
        data: the parsed document (plain dicts/lists/scalars), as written, except that a local
            path in ``target``, ``draft`` or ``target_config`` (top level or a hardware
            profile) is resolved against the recipe's folder (:func:`recipe_local_path`).
        path: the file it was read from.
        lines: dotted key path -> 1-based line of that key in the file (``""`` = document).
        bundled: True for a recipe shipped with recipecli.
    """

    data: Mapping[str, Any]
    path: str
    lines: Mapping[str, int] = field(default_factory=dict)
    bundled: bool = False

    @property
    def name(self) -> str:
        return str(self.data["name"])

    def get(self, key: str, default: Any = None) -> Any:
        """Top-level field ``key`` of the recipe, or ``default``."""
        return self.data.get(key, default)

    @property
    def label(self) -> str:
        """How messages name the file: a bundled recipe as ``recipecli/data/recipes/<file>``
        (never its install path), any other as the path it was given by."""
        return f"recipecli/data/recipes/{Path(self.path).name}" if self.bundled else self.path

    def where(self, *keys: str) -> str:
        """``file:line`` of the deepest recorded key along ``keys`` (for messages; the file as
        :attr:`label` names it)."""
        for n in range(len(keys), -1, -1):
            line = self.lines.get(".".join(keys[:n]))
            if line is not None:
                return f"{self.label}:{line}"
        return self.label


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses aliases (no billion-laughs, no merge keys)."""

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]  # untyped in types-PyYAML
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not allowed in recipes", event.start_mark
            )
        return super().compose_node(parent, index)


def _index_lines(node: yaml.Node, path: tuple[str, ...], out: dict[str, int], file: str) -> None:
    """Record the line of every mapping key; refuse duplicate keys."""
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise RecipeError(
                    f"duplicate key {key!r} (first at line {seen[key]})",
                    path=f"{file}:{line}",
                    hint="keep one",
                )
            seen[key] = line
            sub = (*path, key)
            out[".".join(sub)] = line
            _index_lines(value_node, sub, out, file)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            sub = (*path, str(i))
            out[".".join(sub)] = item.start_mark.line + 1
            _index_lines(item, sub, out, file)


def parse_yaml(text: str, file: str) -> tuple[Any, dict[str, int]]:
    """Parse one YAML document with safe types, no aliases, no duplicate keys.

    Args:
        text: the YAML text.
        file: file name for messages.

    Returns:
        (document, {dotted key path: line}).

    Raises:
        RecipeError: invalid YAML, aliases, duplicate keys, several documents; names file:line.
    """
    check_yaml_limits(text, where=file, what="recipe", error=RecipeError)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise RecipeError("empty recipe", path=file, hint="see docs/recipes-format.md")
        lines: dict[str, int] = {"": node.start_mark.line + 1}
        _index_lines(node, (), lines, file)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{file}:{mark.line + 1}" if mark is not None else file
        raise RecipeError(f"invalid YAML: {exc.problem or exc.context}", path=where) from None
    except yaml.YAMLError as exc:
        raise RecipeError(f"invalid YAML: {exc}", path=file) from None
    finally:
        loader.dispose()
    return data, lines


def resolve_recipe_path(ref: str) -> tuple[Path, bool]:
    """Map a recipe reference (file path or bundled name) to a file.

    Args:
        ref: a path to a ``.yaml`` file or the name of a bundled recipe.

    Returns:
        (path, bundled).

    Raises:
        RecipeError: a directory, a FIFO, device or socket ("not a regular file"), a loop of
            symbolic links (ELOOP), or neither a file nor a bundled name (with a "did you mean").
    """
    path = Path(ref)
    if path.is_file():
        return path, False
    bundled = bundled_dir() / f"{ref}.yaml"
    if "/" not in ref and bundled.is_file():
        return bundled, True
    if path.is_dir():
        raise RecipeError(
            "is a directory, not a recipe file",
            path=ref,
            hint="give a recipe .yaml file or a bundled name (`recipecli render --list`)",
        )
    try:
        mode = path.stat().st_mode
    except OSError as exc:  # missing, a dangling link, or unreadable: "no such recipe" below
        if exc.errno == errno.ELOOP:
            raise RecipeError(
                "is a loop of symbolic links",
                path=ref,
                hint="point the link at a recipe file (`ls -l` shows where each link points)",
            ) from None
        mode = None
    if mode is not None:  # it exists and is not a regular file (a FIFO, a device, a socket)
        raise RecipeError(
            f"is {file_kind(mode)}, not a regular file",
            path=ref,
            hint="recipecli reads recipes only from regular files",
        )
    names = bundled_names()
    close = difflib.get_close_matches(ref, names, n=1)
    hint = f"did you mean {close[0]!r}?" if close else f"bundled: {', '.join(names)}"
    raise RecipeError("no such recipe file or bundled recipe", path=ref, hint=hint)


def _nul_path(value: object, where: tuple[str, ...]) -> tuple[str, ...] | None:
    """Dotted key path of the first string (key or value) holding a NUL byte, or None."""
    stack: list[tuple[object, tuple[str, ...]]] = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return at
        elif isinstance(item, Mapping):
            for k, v in item.items():
                key = str(k)
                if "\x00" in key:
                    return at
                stack.append((v, (*at, key)))
        elif isinstance(item, list):
            stack.extend((v, at) for v in item)
    return None


#: the fields of a recipe (top level and each hardware profile) that may name a local path
PATH_FIELDS: tuple[str, ...] = ("target", "draft", "target_config")


def recipe_local_path(value: str, recipe_dir: Path) -> str:
    """A ``target`` / ``draft`` / ``target_config`` value as the commands read it: a local path
    in a recipe (starting with ``.``, or naming something beside the recipe file) is relative
    to the recipe file, so it is rewritten relative to the current directory (``./sub/draft``);
    a repo id (``org/name`` with no such path beside the recipe), an absolute or ``~`` path,
    and every value of a recipe in the current directory stay as written.

    Args:
        value: the field's value as written.
        recipe_dir: the folder of the recipe file.

    Returns:
        the value to open (a path or a repo id).
    """
    if not value or value.startswith(("/", "~")) or "\x00" in value:
        return value
    try:
        if recipe_dir.resolve() == Path.cwd().resolve():
            return value
    except OSError:  # the current directory is gone: keep what the file says
        return value
    beside = recipe_dir / value
    if not value.startswith(".") and not os.path.lexists(beside):
        return value  # a repo id (org/name, or a legacy one-part name): the engines resolve it
    rel = os.path.relpath(beside)
    return rel if rel.startswith((".", "/")) else "./" + rel  # never read as a repo id


def _resolve_paths(data: Mapping[str, Any], recipe_dir: Path) -> Mapping[str, Any]:
    """``data`` with the local paths of :data:`PATH_FIELDS` (top level and in each hardware
    profile) resolved against ``recipe_dir`` (:func:`recipe_local_path`); values of other
    types are left for the schema to report."""

    def fix(section: Mapping[str, Any]) -> dict[str, Any]:
        return {
            k: recipe_local_path(v, recipe_dir) if k in PATH_FIELDS and isinstance(v, str) else v
            for k, v in section.items()
        }

    out = fix(data)
    hardware = data.get("hardware")
    if isinstance(hardware, Mapping):
        out["hardware"] = {
            name: fix(prof) if isinstance(prof, Mapping) else prof
            for name, prof in hardware.items()
        }
    return out


#: the keys of a ``results`` entry that name files (a path or a list of paths)
RESULTS_FILE_KEYS: tuple[str, ...] = ("baseline", "candidate", "eval_baseline", "eval_candidate")


def results_files(recipe: Recipe) -> list[tuple[str, str, bool]]:
    """Every file the recipe's ``results`` entries name (:data:`RESULTS_FILE_KEYS`), each as
    ``(value as written, file:line, inside)``: ``inside`` is True when the path, joined to the
    recipe file's folder and with every symbolic link followed (``os.path.realpath``), lies in
    that folder. ``docs`` refuses the others (:func:`check_results_inside`), ``lint`` reports them
    (``recipe.results_outside``). Malformed entries and non-string values are skipped (the
    schema reports them)."""
    entries = recipe.get("results")
    out: list[tuple[str, str, bool]] = []
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        for key in RESULTS_FILE_KEYS if isinstance(entry, Mapping) else ():
            value = entry.get(key)
            items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
            for j, item in enumerate(items):
                if isinstance(item, str):
                    at = (str(i), key) if isinstance(value, str) else (str(i), key, str(j))
                    where = recipe.where("results", *at)
                    out.append((item, where, _inside(Path(recipe.path).parent, item)))
    return out


def _inside(folder: Path, value: str) -> bool:
    """True when ``folder / value`` (links followed; an absolute ``value`` as is) is ``folder``
    or lies below it."""
    real = Path(os.path.realpath(folder / value))
    return real.is_relative_to(os.path.realpath(folder))


def results_outside_message(recipe: Recipe, value: str) -> str:
    """The one line for a ``results`` file outside the recipe's folder (docs and lint)."""
    folder = Path(recipe.label).parent
    return (
        f"results entry {value!r} is outside the recipe's folder {folder}; "
        "copy it beside the recipe"
    )


def check_results_inside(recipe: Recipe) -> None:
    """Refuse a recipe whose ``results`` name a file outside its folder (:func:`results_files`).

    Raises:
        RecipeError: the first such file, at its ``file:line``: ``../x``, an absolute path
            elsewhere, a link out of the folder.
    """
    for value, where, inside in results_files(recipe):
        if not inside:
            raise RecipeError(results_outside_message(recipe, value), path=where)


def load_recipe(ref: str, *, validate_schema: bool = True) -> Recipe:
    """Load and validate a recipe.

    Args:
        ref: path to a recipe YAML file, or a bundled recipe name.
        validate_schema: raise on the first schema error (``lint`` passes False and reports all).

    Returns:
        the :class:`Recipe`.

    Raises:
        RecipeError: missing file, too large, invalid YAML, aliases, duplicate keys, schema
            error; the message names ``file:line``.
    """
    path, bundled = resolve_recipe_path(ref)
    size = path.stat().st_size
    if size > MAX_RECIPE_BYTES:
        raise RecipeError(
            f"recipe is {size} bytes, more than the {MAX_RECIPE_BYTES} allowed",
            path=str(path),
        )
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RecipeError(f"not UTF-8 text ({exc.reason})", path=str(path)) from None
    data, lines = parse_yaml(text, str(path))
    nul = _nul_path(data, ())
    if nul is not None:
        line = next(
            (lines[k] for k in (".".join(nul[:n]) for n in range(len(nul), 0, -1)) if k in lines), 1
        )
        raise RecipeError(
            f"{'.'.join(nul) or 'a value'} holds a NUL byte (\\0), which no engine flag can carry",
            path=f"{path}:{line}",
        )
    if not isinstance(data, Mapping):
        raise RecipeError("a recipe must be a YAML mapping", path=f"{path}:1")
    data = _resolve_paths(data, path.parent)
    recipe = Recipe(data=data, path=str(path), lines=lines, bundled=bundled)
    if validate_schema:
        errors = validate(data)
        if errors:
            key, message = errors[0]
            more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
            raise RecipeError(
                message + more, path=recipe.where(*key), hint=f"run `recipecli lint {ref}`"
            )
    return recipe
