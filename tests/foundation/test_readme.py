"""The README's "A campaign from the command line" runs as written, so it cannot drift from the code.

Every line of its block is pasted, in order, into a fresh shell in a fresh copy of the repository (the files a
clone would have, with this machine's installed .venv), on a PostgreSQL database of its own and the real
Touché files where the README says they are (../shared/data/touche beside the clone). The numbers it ends with
are checked against trec_eval's own output for those runs.
"""

import glob
import io
import os
import shlex
import shutil
import stat
import subprocess
from pathlib import Path

import psycopg2
import pytest
from django.core.management import call_command
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## A campaign from the command line"


def readme_block(heading: str) -> list[str]:
    """The lines of the first ```sh block under `heading`."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(f"\n{heading}\n", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


PREFIX = ".venv/bin/touchstone "


def run_readme_block(heading: str, folder: Path, monkeypatch) -> list[tuple[str, list[str], str, str]]:
    """Run each line of the block under `heading` as the command it shows, in order, in this process (on the suite's
    database), from `folder`, where the block's relative paths lead to the repository's files (tests/ linked, var/
    made) and its globs expand as a shell would: (line, arguments, stdout, stderr) per line, or the test fails at the
    first line that exits."""
    lines = readme_block(heading)
    assert lines and all(line.startswith(PREFIX) for line in lines)
    (folder / "tests").symlink_to(ROOT / "tests")
    (folder / "var").mkdir(exist_ok=True)
    monkeypatch.chdir(folder)
    outputs = []
    for line in lines:
        words = shlex.split(line[len(PREFIX):], comments=True)
        args = [match for word in words for match in (sorted(glob.glob(word)) if "*" in word else [word])]
        out, err = io.StringIO(), io.StringIO()
        try:
            call_command(*args, stdout=out, stderr=err)
        except SystemExit as exc:
            pytest.fail(f"{line!r} exited with {exc.code}: {err.getvalue()}")
        outputs.append((line, args, out.getvalue(), err.getvalue()))
    return outputs


def test_the_block_is_where_the_test_looks_for_it():
    lines = readme_block(SECTION)
    assert lines[0] == "make cli"
    assert all(line.startswith(".venv/bin/touchstone ") for line in lines[1:])


@pytest.fixture
def clone(tmp_path, touche_data) -> Path:
    """A copy of the files a clone of this working tree would have, with ../shared/data/touche beside it."""
    clone = tmp_path / "touchstone"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    (clone / ".venv").symlink_to((ROOT / ".venv").resolve())
    # As after `make demo`: the installed .venv is up to date for make, which must not reinstall it here.
    stamp = ROOT / ".venv" / ".installed"
    if stamp.exists():
        for requirements in clone.glob("requirements*.txt"):
            os.utime(requirements, (stamp.stat().st_mtime - 1,) * 2)
    (tmp_path / "shared" / "data").mkdir(parents=True)
    (tmp_path / "shared" / "data" / "touche").symlink_to(touche_data)
    return clone


@pytest.fixture
def database_url():
    """A database of this suite's own (the block creates it: `make cli`), dropped before and after."""
    db = connection.settings_dict
    name = f"test_{db['NAME']}_readme"
    credentials = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    server = {"host": db["HOST"], "port": db["PORT"] or 5432, "user": db["USER"], "password": db["PASSWORD"], "dbname": "postgres"}

    def drop() -> None:
        admin = psycopg2.connect(**server)
        try:
            admin.autocommit = True  # DROP DATABASE runs outside a transaction
            with admin.cursor() as cursor:
                cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            admin.close()

    drop()
    yield f"postgres://{credentials}@{db['HOST']}:{server['port']}/{name}"
    drop()


def trec_eval_ndcg5(touche_data: Path, n: int) -> str:
    """trec_eval's mean ndcg_cut_5 for Shanks run n, from its own output (run 4's file is run 3's: see the data
    README), or, for run 4, from the data README's check with trec_eval."""
    if n == 4:
        computed = (touche_data / "2020-task1" / "computed-ndcg5-2020-task1-shanks.txt").read_text().split("shanks-run-4 ")[1]
        return computed.split("mean nDCG@5=")[1][:6]
    reference = touche_data / "2020-task1" / "reference-trec-eval" / f"run{n}.trec_eval-q.txt"
    [value] = [line.split()[2] for line in reference.read_text().splitlines() if line.split()[:2] == ["ndcg_cut_5", "all"]]
    return value


def test_the_command_line_section_runs_as_written_on_the_real_files(clone, database_url, touche_data):
    # A new shell: no activated .venv, no settings but the database this suite gives it.
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if "/.venv/" not in p + "/")
    env = {"PATH": path, "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8", "DATABASE_URL": database_url}
    outputs = {}
    for line in readme_block(SECTION):
        done = subprocess.run(["bash", "-c", line], cwd=clone, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"{line}\nexit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        outputs[line.split("#")[0].strip()] = done.stdout

    settings_file = clone / "touchstone.env"
    assert stat.S_IMODE(settings_file.stat().st_mode) == 0o600
    assert f"DATABASE_URL={database_url}\n" in settings_file.read_text() and "\nSECRET_KEY=" in settings_file.read_text()

    table = outputs[".venv/bin/touchstone evaluate_runs touche20 --measure nDCG@5"]
    # Each run is its own team (no team given, none in the file names), so a line is the tag, then the mean.
    evaluated = {line.split()[0]: line.split()[1] for line in table.splitlines() if line.strip().startswith("shanks-run-")}
    assert evaluated == {f"shanks-run-{n}": trec_eval_ndcg5(touche_data, n) for n in range(1, 6)}

    # Three measures in one call: one table each, in the order asked, every figure trec_eval's (run 4 has no
    # output of trec_eval's own: see trec_eval_ndcg5).
    tables = outputs[".venv/bin/touchstone evaluate_runs touche20 --measure nDCG@5,P@10,AP"]
    figures = [line.split()[:2] for line in tables.splitlines() if line.strip().startswith("shanks-run-")]
    assert len(figures) == 15 and figures[:5] == [line.split()[:2] for line in table.splitlines() if line.strip().startswith("shanks-run-")]
    for measure, name in (("P@10", "P_10"), ("AP", "map")):
        ours = dict(figures[5:10] if measure == "P@10" else figures[10:])
        for n in (1, 2, 3, 5):
            reference = touche_data / "2020-task1" / "reference-trec-eval" / f"run{n}.trec_eval-q.txt"
            [value] = [line.split()[2] for line in reference.read_text().splitlines() if line.split()[:2] == [name, "all"]]
            assert ours[f"shanks-run-{n}"] == value, (measure, n)

    exported = {tuple(line.split()) for line in (clone / "var" / "touche20-qrels.txt").read_text().splitlines()}
    official = {tuple(line.split()) for line in (touche_data / "2020-task1" / "qrels-relevance.txt").read_text().splitlines()}
    assert exported == official and len(exported) == 2298

    auto = outputs[".venv/bin/touchstone assign_topics touche20 --auto --assessors alice,bob,carol"]
    assert "47 assignment(s) made" in auto  # the 49 topics but the two training ones

    # The example must show something: with every run in one team there is nothing to leave out (tau undefined).
    reusability = outputs[".venv/bin/touchstone reusability touche20 --measure nDCG@5 --kind relevance"]
    assert "leave-one-team-out rankings: undefined" not in reusability and "shanks-run-5" in reusability
