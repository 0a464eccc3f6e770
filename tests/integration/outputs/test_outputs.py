# SPDX-License-Identifier: MIT
"""What the tool writes: outputs complete or absent, "wrote" only when
true, every write checked; traced programs' names escaped in tables."""
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile

import pytest

from conftest import PROGS, TOOL, base_env, ctr_files, load_json, run, tool, traced_env


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    d = tmp_path_factory.mktemp("demo")
    p = run([PROGS / "demo_train", 30], env=traced_env(d / "o"))
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(d / "o")
    return f


FSIZE = 2 << 10


def small_disk():
    """A disk that fills after FSIZE bytes: writes past it fail (EFBIG)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE, FSIZE))


def full_run(args, cwd=None):
    return run([TOOL, *args], env=base_env(), preexec_fn=small_disk, cwd=cwd)


# ---- no false success, no half-written output

def test_missing_directory_is_not_wrote(demo, tmp_path):
    p = tool("convert", "-o", tmp_path / "no" / "such" / "x.json", demo)
    assert p.returncode == 1
    assert "No such file or directory" in p.stderr and "wrote" not in p.stderr, p.stderr


@pytest.mark.parametrize("name", ["x.json", "x.json.gz"])
def test_a_full_disk_leaves_no_half_file(demo, tmp_path, name):
    out = tmp_path / "outdir"
    out.mkdir()
    good = tool("convert", "-o", tmp_path / ("whole." + name), demo, check=True)
    assert os.path.getsize(tmp_path / ("whole." + name)) > 2 * FSIZE and "wrote" in good.stderr
    p = full_run(["convert", "-o", out / name, demo])
    assert p.returncode == 1, p.stderr
    assert "wrote" not in p.stderr and "File too large" in p.stderr, p.stderr
    assert os.listdir(out) == []  # neither the output nor a temporary file
    # An older output of the same name stays as it was.
    (out / name).write_text("older")
    p = full_run(["convert", "-o", out / name, demo])
    assert p.returncode == 1 and "wrote" not in p.stderr
    assert os.listdir(out) == [name] and (out / name).read_text() == "older"


def test_split_ranks_on_a_full_disk(demo, tmp_path):
    d = tmp_path / "split"
    p = full_run(["convert", "--split-ranks", d, demo])
    assert p.returncode == 1 and "wrote" not in p.stderr, p.stderr
    assert not d.exists()  # the directory it made is removed again
    d.mkdir()  # one that was there stays
    p = full_run(["convert", "--split-ranks", d, demo])
    assert p.returncode == 1 and os.listdir(d) == [], p.stderr


def test_stats_tables_on_a_full_disk_keep_the_older_files(demo, tmp_path):
    """`stats -o PREFIX` writes each table whole or not at all: on a full
    disk the older complete table stays, no cut table or temporary file is
    left, and "wrote" is not said."""
    out = tmp_path / "s"
    out.mkdir()
    good = tool("stats", "--report", "nvtx_sum", "--format", "csv", "-o", out / "job", demo,
                check=True)
    assert "wrote" in good.stderr
    older = {n: (out / n).read_bytes() for n in os.listdir(out)}
    assert sorted(older) == ["job_nvtx_sum.csv"], older
    big = tool("stats", "--report", "nvtx_sum", "--format", "json", demo, check=True).stdout
    assert len(big) > FSIZE  # the table cannot fit the small disk
    (out / "job_nvtx_sum.json").write_text("older")
    p = full_run(["stats", "--report", "nvtx_sum", "--format", "json", "-o", out / "job", demo])
    assert p.returncode == 1 and "wrote" not in p.stderr, p.stderr
    assert (out / "job_nvtx_sum.json").read_text() == "older"
    assert sorted(os.listdir(out)) == sorted([*older, "job_nvtx_sum.json"])
    assert all((out / n).read_bytes() == b for n, b in older.items())


def test_stats_tables_replace_a_symlink_never_follow_it(demo, tmp_path):
    target = tmp_path / "elsewhere.csv"
    target.write_text("not yours")
    out = tmp_path / "s"
    out.mkdir()
    os.symlink(target, out / "job_nvtx_sum.csv")
    tool("stats", "--report", "nvtx_sum", "--format", "csv", "-o", out / "job", demo, check=True)
    assert target.read_text() == "not yours"
    assert not (out / "job_nvtx_sum.csv").is_symlink()
    assert (out / "job_nvtx_sum.csv").read_text().startswith("Time")


def test_outputs_appear_whole(demo, tmp_path):
    p = tool("convert", "-o", tmp_path / "x.json", demo, check=True)
    assert p.stderr.strip().endswith(f"wrote {tmp_path / 'x.json'}")
    assert sorted(os.listdir(tmp_path)) == ["x.json"]
    assert load_json(tmp_path / "x.json")["traceEvents"]
    assert oct(os.stat(tmp_path / "x.json").st_mode & 0o777) == oct(0o666 & ~current_umask())


def current_umask():
    m = os.umask(0)
    os.umask(m)
    return m


def test_permission_denied_as_a_user(demo):
    if os.getuid() != 0:
        pytest.skip("needs root to switch to an unprivileged user")
    top = tempfile.mkdtemp(prefix="ct-perm-")
    try:
        os.chmod(top, 0o755)  # not writable by the user
        shutil.copy(demo, f"{top}/t.ctr")
        os.chmod(f"{top}/t.ctr", 0o644)
        p = run([TOOL, "convert", "-o", f"{top}/t.json", f"{top}/t.ctr"], env=base_env(),
                user=65534, group=65534, extra_groups=[])
        assert p.returncode == 1
        assert "Permission denied" in p.stderr and "wrote" not in p.stderr, p.stderr
        assert sorted(os.listdir(top)) == ["t.ctr"]
    finally:
        shutil.rmtree(top)


@pytest.mark.parametrize("cmd", [["stats"], ["info"], ["events"],
                                 ["stats", "--format", "json"], ["convert", "-o", "-"]])
def test_a_full_stdout_is_an_error(demo, cmd):
    with open("/dev/full", "w") as full:
        p = subprocess.run([str(TOOL), *cmd, str(demo)], stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=60, env=base_env())
    assert p.returncode == 1, (cmd, p.stderr)
    assert "No space left on device" in p.stderr


# ---- names from the traced program are escaped in tables

def test_table_output_escapes_control_bytes(tmp_path):
    p = run([PROGS / "hostile"], env=traced_env(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(tmp_path / "o")
    t = tool("stats", "--report", "nvtx_sum", f, check=True).stdout
    # Nothing but printable text, spaces and line ends reaches the terminal.
    bad = {c for c in t if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0}
    assert not bad, sorted(map(hex, map(ord, bad)))
    lines = t.splitlines()
    head = next(i for i, l in enumerate(lines) if "Range" in l)
    rows = lines[head + 2:]
    # Every row is one line: it starts with the numbers of the row.
    assert rows and all(re.match(r"\s*\d+\.\d\s+\d+\s+\d+", r) for r in rows if r.strip()), t
    assert "\\n" in t and "\\x1b" in t  # shown, not obeyed
    # events too: its TSV has spaces for tabs and line ends, escapes for the rest
    ev = tool("events", f, check=True).stdout
    bad = {c for c in ev if (ord(c) < 0x20 and c not in "\t\n") or 0x7f <= ord(c) < 0xa0}
    assert not bad, sorted(map(hex, map(ord, bad)))
    assert "\\x1b" in ev
    # csv and json keep the exact bytes (quoted / escaped in their own way).
    j = tool("stats", "--report", "nvtx_sum", "--format", "json", f, check=True).stdout
    assert "\\u001b" in j


PANDAS_READ = """
import csv, json, sys
import pandas as pd
tsv = pd.read_csv(sys.argv[1], sep="\\t", keep_default_na=False, dtype=str, quoting=csv.QUOTE_NONE)
stats = pd.read_csv(sys.argv[2], keep_default_na=False, dtype=str)
print(json.dumps(dict(
    slices=sorted(tsv[(tsv["type"] == "slice") & (tsv["cat"] == "nvtx")]["name"]),
    tracks=sorted(tsv["track_name"].unique()),
    processes=sorted(tsv[tsv["type"] == "process"]["name"]),
    ranges=sorted(stats["Range"]))))
"""


def test_invalid_utf8_reaches_pandas_as_the_json_has_it(tmp_path):
    """`cuptrace events` and `stats --format csv` do not write the traced
    program's invalid UTF-8 raw (pandas.read_csv would raise
    UnicodeDecodeError): each bad byte is U+FFFD, as in the JSON, so the
    names pandas reads are the JSON's (the TSV's tabs and line ends as
    spaces)."""
    import json
    from conftest import convert, venv_python
    from hostile_trace import hostile_files
    venv = venv_python("pandas")
    files = hostile_files(tmp_path / "in")
    with open(tmp_path / "ev.tsv", "wb") as f:
        ev = subprocess.run([str(TOOL), "events", *map(str, files)], stdout=f,
                            stderr=subprocess.PIPE, env=base_env())
    assert ev.returncode == 0, ev.stderr
    p = tool("stats", "--report", "nvtx_sum", "--format", "csv", "-o", tmp_path / "s", *files)
    assert p.returncode == 0, p.stderr
    r = subprocess.run([str(venv), "-c", PANDAS_READ, str(tmp_path / "ev.tsv"),
                        str(tmp_path / "s_nvtx_sum.csv")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout)
    doc = convert(files, tmp_path / "h.json")["traceEvents"]
    def flat(s):  # the TSV's spaces for tabs and line ends, escapes for other controls
        s = re.sub("[\t\n\r]", " ", s)
        return "".join(f"\\x{ord(c):02x}" if ord(c) < 0x20 or ord(c) == 0x7f else
                       f"\\u{ord(c):04x}" if 0x80 <= ord(c) < 0xa0 else c for c in s)
    nvtx = sorted(flat(e["name"]) for e in doc if e.get("cat") == "user_annotation" and e["ph"] == "X")
    assert got["slices"] == nvtx
    assert "bad utf8 \ufffd\ufffd \ufffd( \ufffd\ufffd \ufffd\ufffd\ufffd end" in nvtx
    threads = {e["args"]["name"] for e in doc if e.get("name") == "thread_name"}
    assert "thread \ufffd\ufffd\ufffd" in threads and threads <= set(got["tracks"])
    procs = {e["args"]["name"] for e in doc if e.get("name") == "process_name"
             and e["args"]["name"].startswith("rank ")}
    assert set(got["processes"]) == procs and any("h\ufffdst" in n for n in procs)
    want = json.loads(tool("stats", "--report", "nvtx_sum", "--format", "json", *files).stdout)
    [rows] = [v for k, v in want.items() if k.startswith("nvtx_sum")]
    assert got["ranges"] == sorted(r["Range"] for r in rows)
    assert ":bad utf8 \ufffd\ufffd \ufffd( \ufffd\ufffd \ufffd\ufffd\ufffd end" in got["ranges"]
    assert "dom \ufffd\ufffd:msg \ufffd end" in got["ranges"]


def killed_by_file_limit():
    """The file size limit with its signal at the default action: the first
    write past FSIZE kills the command by SIGXFSZ, as a signal from outside
    (SIGINT, SIGTERM) would in the middle of a conversion."""
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE, FSIZE))


@pytest.mark.parametrize("name", ["x.json", "x.json.gz", "x.pftrace", "x.sqlite", "split"])
def test_a_command_killed_by_a_signal_leaves_no_temporary_file(demo, tmp_path, name):
    out = tmp_path / "outdir"
    out.mkdir()
    args = ["--split-ranks", out / "split"] if name == "split" else ["-o", out / name]
    p = run([TOOL, "convert", *args, demo], env=base_env(), preexec_fn=killed_by_file_limit)
    assert p.returncode == -signal.SIGXFSZ, (p.returncode, p.stderr)
    assert "wrote" not in p.stderr
    left = [str(f.relative_to(out)) for f in out.rglob("*")]
    assert left == [], left  # nor the directory --split-ranks made
