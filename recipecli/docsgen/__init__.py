"""Documentation pages from recipes: ``recipecli docs``.

For a set of recipes this builds, as data and then through Jinja2 templates in ``templates/``
(``docs_*.md.j2``):

* per engine, ``models-<engine>.md`` in the layout of tokenspeed's ``docs/recipes/models.md``
  (lightseekorg/tokenspeed docs/recipes/models.md): ``# Model Recipes``, a short intro, one ``##``
  per recipe ``family`` with the recipe's prose and a fenced ``bash`` block (one flag per line,
  `` \\`` continuations), ``###`` per further hardware variant, ``Notes:`` bullets, measured
  results when the recipe links them, and a closing ``## Tuning Order``;
* per recipe, ``<name>.md``: the draft/target pair, the offline ``check`` verdicts when the
  checkpoints can be opened offline, and serve / bench / eval commands for every hardware profile
  and engine;
* ``README.md``: an index of the pages.

Every command is rendered by :func:`recipecli.recipes.render.render_command` and formatted by
:func:`recipecli.recipes.render.format_shell`, exactly as ``recipecli render`` prints it, so the
docs never drift from what users run. Output is deterministic: recipes sorted by name, families
by name, no timestamps, no absolute paths; a second run changes no byte. Unless
``--checkpoints online``, nothing reaches the Hub: the pages pass ``offline=True`` down to
:func:`recipecli.checkpoint.open_checkpoint` (the environment is left alone).

Modules: :mod:`.inputs` (recipes, hardware profiles, rendered commands), :mod:`.markdown`
(fences, code spans, cells, prose), :mod:`.offline_check` (the check section), :mod:`.results`
(linked A/B results), :mod:`.pages` (the three page kinds, :func:`generate`), :mod:`.sync`
(write / ``--check`` the output directory). Every name of these is re-exported here.
:mod:`.engine_pages` (``docs --engines``: docs/engines/, the engine models written out) is not:
it imports the engine models, and ``docs`` imports it only when asked for those pages.
"""

from recipecli.docsgen.inputs import (
    WHAT_TITLES,
    Command,
    collect_recipes,
    command_of,
    hardware_names,
    hardware_profile,
    profile_mentions_engine,
    recipe_ref,
    render_commands,
    unsupported_reason,
)
from recipecli.docsgen.markdown import cell, code, fence, prose, sentence
from recipecli.docsgen.offline_check import (
    CHECKPOINT_MODES,
    CheckRow,
    CheckSection,
    check_section,
    open_for_docs,
)
from recipecli.docsgen.pages import (
    GENERATED_MARKER,
    VENDOR_TITLES,
    DocsOptions,
    generate,
    index_page,
    models_page,
    recipe_page,
    template_of,
)
from recipecli.docsgen.results import results_sections
from recipecli.docsgen.sync import (
    SyncReport,
    SyncResult,
    ensure_output_dir,
    find_orphans,
    first_line,
    is_generated,
    sync,
)
from recipecli.engines import ENGINES
from recipecli.engines import TITLES as ENGINE_TITLES
from recipecli.examples import bundled_snapshots

__all__ = [
    "CHECKPOINT_MODES",
    "ENGINES",
    "ENGINE_TITLES",
    "GENERATED_MARKER",
    "VENDOR_TITLES",
    "WHAT_TITLES",
    "CheckRow",
    "CheckSection",
    "Command",
    "DocsOptions",
    "SyncReport",
    "SyncResult",
    "bundled_snapshots",
    "cell",
    "check_section",
    "code",
    "collect_recipes",
    "command_of",
    "ensure_output_dir",
    "fence",
    "find_orphans",
    "first_line",
    "generate",
    "hardware_names",
    "hardware_profile",
    "index_page",
    "is_generated",
    "models_page",
    "open_for_docs",
    "profile_mentions_engine",
    "prose",
    "recipe_page",
    "recipe_ref",
    "render_commands",
    "results_sections",
    "sentence",
    "sync",
    "template_of",
    "unsupported_reason",
]
