"""No command writes over, into or around its inputs, replaces special files, or leaves
temporary files behind (recipecli.safe_write, the one writer every output goes through).

Each case runs the CLI as a user would, in a scratch folder with relative paths, and then checks
the bytes on disk: inputs unchanged (hashes), special files still special, no ``.*.tmp`` or
``.*.old-*`` leftovers. Cases that lost data before this writer: ``convert models/draft models
--force`` (deleted ``models``), OUT ``.`` (crash, ``..old-*`` left), OUT = the ``--target``
folder (replaced it), ``inspect --save-metadata`` on the checkpoint's own ``config.json`` or
shard (overwrote it), ``report -o base.json`` (overwrote the bench file it read), ``-o`` a FIFO
or a device (replaced by a regular file).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.convert import TARGET_CONFIG, tiny, write_draft, write_target
from helpers.fixtures import REPO_ROOT as REPO
from helpers.report import PR_CANDIDATE, bench_json  # vLLM PR #47391 A/B figures

from recipecli.cli import main
from recipecli.errors import UsageError
from recipecli.testing.specs import valid_vocab_map


def tree(root: Path) -> dict[str, str]:
    """Every entry under ``root`` (relative path -> sha256 of a file, or its type)."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        st = os.lstat(p)
        if stat.S_ISREG(st.st_mode):
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
        elif stat.S_ISDIR(st.st_mode):
            out[rel] = "dir"
        elif stat.S_ISFIFO(st.st_mode):
            out[rel] = "fifo"
        elif stat.S_ISCHR(st.st_mode):
            out[rel] = "chr"
        elif stat.S_ISLNK(st.st_mode):
            out[rel] = "link->" + os.readlink(p)
        else:
            out[rel] = "other"
    return out


def cli(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    cap = capsys.readouterr()
    return exc.value.code, cap.out, cap.err


def refused(capsys, *args: str) -> str:
    """Run, expect exit 2 with one error line and no traceback; return that line."""
    code, out, err = cli(capsys, *args)
    lines = err.splitlines()
    assert code == 2, err
    assert out == "" and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("recipecli: error: "), err
    return lines[0]


@pytest.fixture
def models(tmp_path, fixture_config, monkeypatch) -> Path:
    """A scratch folder (the cwd) holding models/draft (a format-A draft), models/other/, and
    target/config.json (a local target folder)."""
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=7)
    write_draft(tmp_path / "models" / "draft", cfg, d2t=d2t, t2d=t2d)
    (tmp_path / "models" / "other").mkdir()
    (tmp_path / "models" / "other" / "precious.txt").write_text("precious\n")
    write_target(tmp_path / "target")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def no_leftovers(root: Path) -> None:
    hidden = [str(p) for p in root.rglob(".*") if p.name != ".recipecli-convert.json"]
    assert hidden == [], hidden


# --------------------------------------------------------------------------- convert OUT


@pytest.mark.parametrize(
    ("out", "needle"),
    [
        ("models", "it holds the draft models/draft, which replacing it would delete"),
        (".", "it holds the draft models/draft"),
        ("models/draft", "it is the draft models/draft"),
        ("models/draft/sub", "it lies inside the draft models/draft"),
        ("target", "it is the --target target"),
        ("target/sub", "it lies inside the --target target"),
    ],
)
def test_convert_out_never_touches_the_draft_or_target(models, capsys, out, needle):
    before = tree(models)
    line = refused(
        capsys, "convert", "models/draft", out, "--to", "eagle3", "--target", "target", "--force"
    )
    assert needle in line
    assert tree(models) == before


def test_convert_out_dot_inside_the_draft_is_refused_without_leftovers(models, capsys):
    before = tree(models)
    os.chdir("models/draft")
    line = refused(capsys, "convert", ".", ".", "--to", "eagle3", "--force")
    assert "it is the draft ." in line
    os.chdir(models)
    assert tree(models) == before  # no ..old-* folder, nothing replaced


def test_convert_out_is_the_current_directory(models, capsys):
    (models / "empty").mkdir()
    os.chdir("empty")
    line = refused(capsys, "convert", "../models/draft", ".", "--to", "eagle3", "--force")
    assert "it is the current directory or holds it" in line
    os.chdir(models)
    assert list((models / "empty").iterdir()) == []
    assert not [p for p in models.iterdir() if p.name.startswith(".")]


def test_convert_out_through_a_link_to_the_draft(models, capsys):
    os.symlink("models/draft", "link")
    before = tree(models)
    line = refused(capsys, "convert", "models/draft", "link", "--to", "eagle3", "--force")
    assert "symbolic link" in line
    assert tree(models) == before


def test_convert_force_never_deletes_a_foreign_folder(models, capsys):
    before = tree(models)
    line = refused(capsys, "convert", "models/draft", "models/other", "--to", "eagle3", "--force")
    assert "is not a recipecli convert output" in line
    assert tree(models) == before


def test_convert_force_into_an_empty_folder(models, capsys):
    (models / "out").mkdir()
    code, _, err = cli(capsys, "convert", "models/draft", "out", "--to", "eagle3", "--force")
    assert code == 0, err
    assert sorted(p.name for p in (models / "out").iterdir()) == [
        ".recipecli-convert.json",
        "config.json",
        "model.safetensors",
    ]
    no_leftovers(models)


def test_convert_out_special_files_stay(models, capsys):
    os.mkfifo("fifo")
    line = refused(capsys, "convert", "models/draft", "fifo", "--to", "eagle3", "--force")
    assert "it is a FIFO (named pipe), not a folder" in line
    assert stat.S_ISFIFO(os.lstat("fifo").st_mode)


# --------------------------------------------------------------------------- inspect --save-metadata


@pytest.mark.parametrize(
    ("dest", "needle"),
    [
        ("models/draft/config.json", "it is config.json of SOURCE models/draft"),
        ("models/draft/model.safetensors", "it is model.safetensors of SOURCE models/draft"),
        ("models/draft/snap.json", "it lies inside SOURCE models/draft"),
    ],
)
def test_save_metadata_never_writes_into_the_checkpoint(models, capsys, dest, needle):
    before = tree(models)
    line = refused(capsys, "inspect", "models/draft", "--save-metadata", dest)
    assert needle in line
    assert tree(models) == before


def test_save_metadata_through_a_link_or_hard_link_to_an_input(models, capsys):
    os.symlink("models/draft/config.json", "cfg-link.json")
    os.link("models/draft/config.json", "cfg-hard.json")  # another name, the same inode
    before = tree(models)
    line = refused(capsys, "inspect", "models/draft", "--save-metadata", "cfg-link.json")
    assert "it is config.json of SOURCE models/draft" in line
    line = refused(capsys, "inspect", "models/draft", "--save-metadata", "cfg-hard.json")
    assert "it is config.json of SOURCE models/draft" in line
    assert tree(models) == before


def test_save_metadata_over_its_own_snapshot_source(models, capsys):
    assert cli(capsys, "inspect", "models/draft", "--save-metadata", "snap.json")[0] == 0
    before = tree(models)
    line = refused(capsys, "inspect", "snap.json", "--save-metadata", "snap.json")
    assert "it is SOURCE snap.json" in line
    assert tree(models) == before


def test_save_metadata_replaces_only_a_previous_snapshot(models, capsys):
    Path("notes.json").write_text('{"mine": true}\n')
    line = refused(capsys, "inspect", "models/draft", "--save-metadata", "notes.json")
    assert "the file exists and is not a recipecli snapshot" in line
    assert Path("notes.json").read_text() == '{"mine": true}\n'
    for _ in range(2):  # a previous snapshot is replaced
        code, _, err = cli(capsys, "inspect", "models/draft", "--save-metadata", "snap.json")
        assert code == 0, err
    assert json.loads(Path("snap.json").read_text())["recipecli_snapshot"] == 1
    Path("empty.json").touch()  # an empty file holds nothing to lose
    assert cli(capsys, "inspect", "models/draft", "--save-metadata", "empty.json")[0] == 0
    no_leftovers(models)


def test_save_metadata_fifo_is_not_replaced_and_nothing_blocks(models, capsys):
    os.mkfifo("fifo.json")
    line = refused(capsys, "inspect", "models/draft", "--save-metadata", "fifo.json")
    assert "it is a FIFO (named pipe), not a regular file" in line
    assert stat.S_ISFIFO(os.lstat("fifo.json").st_mode)


def _null_device(where: Path) -> Path:
    """A character device like /dev/null (1, 3) at ``where`` — never the real /dev/null, which
    a regression would replace for the whole machine. Skipped where mknod is not allowed."""
    try:
        os.mknod(where, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot create a character device here: {exc}")
    return where


def test_device_destinations_are_never_replaced(models, capsys):
    null = _null_device(models / "null")
    line = refused(capsys, "inspect", "models/draft", "--save-metadata", "null")
    assert "it is a character device, not a regular file" in line
    a, b = (
        write(models / "a.json", bench_json()),
        write(models / "b.json", bench_json(PR_CANDIDATE)),
    )
    line = refused(capsys, "report", a, b, "-o", "null")
    assert "it is a character device" in line
    assert stat.S_ISCHR(os.lstat(null).st_mode)


def test_dev_null_itself_is_refused_without_writing():
    from recipecli.safe_write import SNAPSHOT, prepare_file

    with pytest.raises(UsageError) as exc:  # prepare_file writes nothing: safe to try
        prepare_file("/dev/null", what="-o file", noun="-o path", kind=SNAPSHOT)
    assert exc.value.one_line() == (
        "/dev/null: cannot write -o file: it is a character device, not a regular file "
        "— give another -o path"
    )


# --------------------------------------------------------------------------- report -o / --plot


def write(path: Path, data) -> str:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path.name


@pytest.fixture
def bench(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return write(tmp_path / "base.json", bench_json()), write(
        tmp_path / "cand.json", bench_json(PR_CANDIDATE)
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("-o", "base.json"), "it is the baseline bench file base.json"),
        (("-o", "cand.json", "--json"), "it is the candidate bench file cand.json"),
        (("--plot", "./base.json"), "it is the baseline bench file base.json"),
        (("-o", "same.md", "--plot", "./same.md"), "-o and --plot name the same file"),
    ],
)
def test_report_never_writes_over_its_bench_files(tmp_path, bench, capsys, args, needle):
    before = tree(tmp_path)
    line = refused(capsys, "report", *bench, *args)
    assert needle in line
    assert tree(tmp_path) == before


def test_report_glob_input_is_an_input_too(tmp_path, bench, capsys):
    before = tree(tmp_path)
    line = refused(capsys, "report", "-a", "b*.json", "-b", "cand.json", "-o", "base.json")
    assert "it is the baseline bench file base.json" in line
    assert tree(tmp_path) == before


def test_report_replaces_only_a_previous_table(tmp_path, bench, capsys):
    Path("README.md").write_text("# my notes\n")
    line = refused(capsys, "report", *bench, "-o", "README.md")
    assert "the file exists and is not a recipecli report table" in line
    assert Path("README.md").read_text() == "# my notes\n"
    for extra in ((), ("--json",), ()):  # md, then json over md, then md over json
        code, _, err = cli(capsys, "report", *bench, "-o", "ab.out", *extra)
        assert code == 0, err
    assert Path("ab.out").read_text().startswith("Workload: ")
    no_leftovers(tmp_path)


def test_report_fifo_output_stays_a_fifo(tmp_path, bench, capsys):
    os.mkfifo("table.md")
    line = refused(capsys, "report", *bench, "-o", "table.md")
    assert "it is a FIFO (named pipe), not a regular file" in line
    assert stat.S_ISFIFO(os.lstat("table.md").st_mode)


def test_plot_replaces_only_a_previous_plot(tmp_path, bench, capsys):
    pytest.importorskip("matplotlib")
    Path("photo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)  # someone else's PNG
    line = refused(capsys, "report", *bench, "--plot", "photo.png")
    assert "is not a recipecli report --plot chart" in line
    for _ in range(2):
        code, _, err = cli(capsys, "report", *bench, "--plot", "ab.png")
        assert code == 0, err
    no_leftovers(tmp_path)


# --------------------------------------------------------------------------- docs -o


def test_docs_pages_never_land_in_a_recipe_directory(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "recipes").mkdir()
    src = REPO / "recipecli" / "data" / "recipes" / "llama3.1-8b-eagle3.yaml"
    text = src.read_text().replace("name: llama3.1-8b-eagle3", "name: my-llama")
    (tmp_path / "recipes" / "my.yaml").write_text(text)
    before = tree(tmp_path)
    line = refused(capsys, "docs", "recipes", "-o", "recipes", "--checkpoints", "none")
    assert "it lies inside the recipe directory recipes" in line
    assert tree(tmp_path) == before


# --------------------------------------------------------------------------- one folder rule


MISSING = "directory nodir does not exist — give another {noun} or create nodir first"


@pytest.mark.parametrize(
    ("args", "what", "noun"),
    [
        (("convert", "models/draft", "nodir/out", "--to", "eagle3"), "OUT", "OUT"),
        (
            ("inspect", "models/draft", "--save-metadata", "nodir/s.json"),
            "--save-metadata file",
            "--save-metadata path",
        ),
        (("report", "a.json", "b.json", "-o", "nodir/t.md"), "-o file", "-o path"),
        (("report", "a.json", "b.json", "--plot", "nodir/t.png"), "--plot file", "--plot path"),
        (("docs", "my-recipe", "-o", "nodir/site"), "-o DIR", "-o DIR"),
    ],
)
def test_every_writer_refuses_a_missing_folder_with_the_same_line(models, capsys, args, what, noun):
    write(models / "a.json", bench_json())
    write(models / "b.json", bench_json(PR_CANDIDATE))
    src = REPO / "recipecli" / "data" / "recipes" / "llama3.1-8b-eagle3.yaml"
    Path("my-recipe.yaml").write_text(src.read_text().replace("llama3.1-8b-eagle3", "my-recipe"))
    args = tuple("my-recipe.yaml" if a == "my-recipe" else a for a in args)
    if "--checkpoints" not in args and args[0] == "docs":
        args += ("--checkpoints", "none")
    before = tree(models)
    line = refused(capsys, *args)
    dest = next(a for a in args if a.startswith("nodir/"))
    assert line == f"recipecli: error: {dest}: cannot write {what}: " + MISSING.format(noun=noun)
    assert tree(models) == before


# --------------------------------------------------------------------------- signals


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_sigterm_while_writing_leaves_no_temp_file(tmp_path, bench):
    # SIGTERM arrives while the table is being flushed: the temp file goes, the old table stays
    Path("ab.md").write_text("Workload: old table\n")
    proc = _run(
        """
        import os, signal
        real = os.fsync
        def fsync(fd):
            os.kill(os.getpid(), signal.SIGTERM)
            real(fd)
        os.fsync = fsync
        from recipecli.cli import main
        main(["report", "base.json", "cand.json", "-o", "ab.md"])
        """,
        tmp_path,
    )
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] in ("recipecli: interrupted", "recipecli: aborted")
    assert Path("ab.md").read_text() == "Workload: old table\n"
    no_leftovers(tmp_path)


def test_sighup_during_convert_leaves_no_out_and_no_temp_dir(models):
    proc = _run(
        """
        import os, signal
        import recipecli.convert.write as cm
        real, calls = cm.write_tensor, []
        def flaky(*a, **kw):
            calls.append(1)
            if len(calls) == 3:
                os.kill(os.getpid(), signal.SIGHUP)
            return real(*a, **kw)
        cm.write_tensor = flaky
        from recipecli.cli import main
        main(["convert", "models/draft", "out", "--to", "eagle3"])
        """,
        models,
    )
    assert proc.returncode == 130, proc.stderr
    assert not (models / "out").exists()
    no_leftovers(models)


def test_interrupt_inside_write_file_removes_the_temp_file(tmp_path, monkeypatch):
    import recipecli.safe_write as sw

    def boom(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        sw.write_file(tmp_path / "x.json", b"{}", what="-o file", noun="-o path", kind=None)
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- no machine paths


def _all_text(root: Path) -> str:
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file()
    )


def test_no_output_file_holds_a_path_of_this_machine(models, capsys, fixture_config):
    # a local target folder whose config records its repo id, a draft saved from a local path
    tgt = models / "tgt"
    tgt.mkdir()
    (tgt / "config.json").write_text(json.dumps(TARGET_CONFIG))
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    cfg["_name_or_path"] = str(models / "runs" / "step-1000")  # where a trainer saved it
    d2t, t2d = valid_vocab_map(1000, 100, seed=8)
    write_draft(models / "A", cfg, d2t=d2t, t2d=t2d)
    write(models / "a.json", bench_json())
    write(models / "b.json", bench_json(PR_CANDIDATE))
    src = REPO / "recipecli" / "data" / "recipes" / "llama3.1-8b-eagle3.yaml"
    Path("mine.yaml").write_text(src.read_text().replace("llama3.1-8b-eagle3", "mine"))
    Path("outs").mkdir()
    runs = [
        ("convert", "A", "outs/spec", "--to", "speculators", "--target", "tgt",
         "--norm-before-residual", "false"),
        ("convert", "A", "outs/flat", "--to", "eagle3"),
        ("inspect", "models/draft", "--save-metadata", "outs/a.snapshot.json"),
        ("inspect", "tgt", "--save-metadata", "outs/t.snapshot.json"),
        ("report", "a.json", "b.json", "-o", "outs/ab.md"),
        ("report", "a.json", "b.json", "--json", "-o", "outs/ab.json"),
        ("docs", "mine.yaml", "-o", "outs/site", "--checkpoints", "none"),
    ]  # fmt: skip
    for args in runs:
        code, _, err = cli(capsys, *args)
        assert code == 0, (args, err)
    spec = json.loads((models / "outs" / "spec" / "config.json").read_text())
    assert spec["speculators_config"]["verifier"]["name_or_path"] == TARGET_CONFIG["_name_or_path"]
    # (a snapshot copies config.json verbatim, a path a trainer wrote into it included: that is
    # the input's content, not this machine's path; convert drops such a _name_or_path)
    text = _all_text(models / "outs")
    for machine in {str(models), os.path.realpath(models)}:
        assert machine not in text


def test_local_target_without_a_repo_id_needs_verifier(models, capsys):
    t = models / "plain"
    t.mkdir()
    (t / "config.json").write_text(
        json.dumps({k: v for k, v in TARGET_CONFIG.items() if k != "_name_or_path"})
    )
    args = ["convert", "models/draft", "spec", "--to", "speculators", "--target", "plain",
            "--norm-before-residual", "false"]  # fmt: skip
    line = refused(capsys, *args)
    assert "cannot tell the target's Hugging Face repo id" in line and "--verifier" in line
    assert not (models / "spec").exists()
    code, _, err = cli(capsys, *args, "--verifier", "meta-llama/Llama-3.1-8B-Instruct")
    assert code == 0, err
    cfg = json.loads((models / "spec" / "config.json").read_text())
    assert cfg["speculators_config"]["verifier"] == {
        "name_or_path": "meta-llama/Llama-3.1-8B-Instruct",
        "architectures": ["LlamaForCausalLM"],
    }
    # a path only when the user typed it into --verifier
    code, _, err = cli(capsys, *args[:2], "spec2", *args[3:], "--verifier", str(t))
    assert code == 0, err
    cfg = json.loads((models / "spec2" / "config.json").read_text())
    assert cfg["speculators_config"]["verifier"]["name_or_path"] == str(t)


def test_verifier_from_an_hf_cache_folder_and_from_a_hub_snapshot(models, capsys):
    from recipecli.checkpoint import open_checkpoint
    from recipecli.convert import verifier_name

    plain = {k: v for k, v in TARGET_CONFIG.items() if k != "_name_or_path"}
    snap = models / "hub" / "models--meta-llama--Llama-3.1-8B-Instruct" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps(plain))
    # the HF cache layout huggingface_hub writes: models--{org}--{name}/snapshots/{revision}
    assert verifier_name(open_checkpoint(str(snap))) == "meta-llama/Llama-3.1-8B-Instruct"
    # a snapshot file recording a Hub source keeps the repo id
    doc = {"recipecli_snapshot": 1, "source": "meta-llama/Llama-3.1-8B-Instruct",
           "revision": "abc123", "kind": "hub", "weight_format": "none", "shards": [],
           "config": plain, "tensors": {}, "values": {}}  # fmt: skip
    (models / "t.snapshot.json").write_text(json.dumps(doc))
    ck = open_checkpoint(str(models / "t.snapshot.json"))
    assert verifier_name(ck) == "meta-llama/Llama-3.1-8B-Instruct"
    # ... but a snapshot of a local folder does not make its path a repo id
    (models / "l.snapshot.json").write_text(json.dumps({**doc, "kind": "local", "source": "tgt"}))
    with pytest.raises(Exception, match="--verifier"):
        verifier_name(open_checkpoint(str(models / "l.snapshot.json")))


def test_verifier_only_for_speculators(models, capsys):
    line = refused(capsys, "convert", "models/draft", "o", "--to", "eagle3", "--verifier", "x/y")
    assert "--verifier applies to --to speculators only" in line


def test_replace_dir_puts_the_previous_out_back_when_the_rename_fails(tmp_path, monkeypatch):
    import recipecli.safe_write as sw

    out, tmp = tmp_path / "out", tmp_path / ".out.tmp-1"
    out.mkdir()
    (out / "config.json").write_text("old")
    tmp.mkdir()
    (tmp / "config.json").write_text("new")
    real, calls = os.rename, []

    def rename(a, b):
        calls.append((a, b))
        if len(calls) == 2:  # moving the new folder into place fails
            raise OSError(28, "No space left on device")
        return real(a, b)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(OSError):
        sw.replace_dir(tmp, out, ["config.json"])
    assert (out / "config.json").read_text() == "old"  # the previous OUT is back
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.tmp-1", "out"]  # no .old-*


def test_hf_cache_source_blobs_and_hard_links_are_inputs(models):
    # the HF cache layout huggingface_hub writes: snapshots/<rev>/<file> -> ../../blobs/<hash>
    repo = models / "hfc" / "models--org--tgt"
    (repo / "blobs").mkdir(parents=True)
    (repo / "snapshots" / "abc").mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc")
    for name, blob in (("config.json", "b1"), ("model.safetensors", "b2")):
        os.replace(models / "models" / "draft" / name, repo / "blobs" / blob)
        os.symlink(f"../../blobs/{blob}", repo / "snapshots" / "abc" / name)
    os.link(repo / "blobs" / "b2", models / "hard.safetensors")
    env = {**os.environ, "HF_HUB_CACHE": str(models / "hfc"), "HF_HUB_OFFLINE": "1"}

    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "recipecli", *args],
            cwd=models, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    assert run("inspect", "org/tgt").returncode == 0
    before = tree(models)
    for dest, needle in (
        ("hfc/models--org--tgt/blobs/b2", "it is model.safetensors of SOURCE org/tgt"),
        ("hard.safetensors", "it is model.safetensors of SOURCE org/tgt"),
        ("hfc/models--org--tgt/snapshots/abc/s.json", "it lies inside SOURCE org/tgt"),
    ):
        proc = run("inspect", "org/tgt", "--save-metadata", dest)
        assert proc.returncode == 2 and needle in proc.stderr, proc.stderr
    proc = run("convert", "hfc/models--org--tgt/snapshots/abc", "hfc", "--to", "eagle3", "--force")
    assert proc.returncode == 2 and "it holds the draft" in proc.stderr, proc.stderr
    assert tree(models) == before
