# SPDX-License-Identifier: MIT
"""Many inputs: unusable files next to good ones (each skipped with one
warning, the rest used; --strict makes it an error), exact duplicates
(ignored with a warning), and jobs of thousands of ranks under a small
limit of open files."""
import json
import os
import resource
import shutil
import time

import pytest

from conftest import (PROGS, TOOL, base_env, ctr_files, load_json, rank_files, run, tool,
                      traced_env)

COMMANDS = ("convert", "stats", "info", "events")


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """One small NVTX trace (3 steps of demo_train)."""
    d = tmp_path_factory.mktemp("small")
    p = run([PROGS / "demo_train", 3], env=traced_env(d / "o", RANK=0, WORLD_SIZE=1))
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(d / "o")
    return f


def n_slices(doc):
    return sum(1 for e in doc["traceEvents"] if e.get("ph") == "X")


def nvtx_counts(stdout):
    """Range name -> count of `stats --report nvtx_sum --format json`."""
    [rows] = json.loads(stdout).values()
    return {r["Range"]: r["Instances"] for r in rows}


def command(cmd, out, *inputs, extra=()):
    """(argv, what it writes): each command of the tool on inputs."""
    if cmd == "convert":
        return ["convert", "-o", out, *extra, *inputs]
    if cmd == "stats":
        return ["stats", "--report", "nvtx_sum", "--format", "json", *extra, *inputs]
    return [cmd, *extra, *inputs]


# ---- one bad input must not sink the job

def bad_dir(tmp_path, good):
    d = tmp_path / "job"
    d.mkdir()
    shutil.copy(good, d / "rank0.ctr")
    (d / "rank1.ctr").write_bytes(b"")  # a rank killed as it started
    (d / "rank2.ctr").write_bytes(b"garbage, not a trace at all\n" * 10)
    os.symlink(d / "gone.ctr", d / "rank3.ctr")  # removed under our feet
    return d


@pytest.mark.parametrize("cmd", COMMANDS)
def test_unusable_files_are_skipped_with_a_warning(small, tmp_path, cmd):
    d = bad_dir(tmp_path, small)
    out = tmp_path / "o.json"
    p = tool(*command(cmd, out, d))
    assert p.returncode == 0, p.stderr
    warn = [l for l in p.stderr.splitlines() if "skipped" in l]
    for name in ("rank1.ctr", "rank2.ctr", "rank3.ctr"):
        assert sum(name in l for l in warn) == 1, p.stderr
    assert "3 of 4 input files skipped" in p.stderr, p.stderr
    if cmd == "convert":
        assert n_slices(load_json(out)) > 0 and "wrote" in p.stderr
    elif cmd == "stats":
        assert nvtx_counts(p.stdout)[":train_step"] == 3
    elif cmd == "info":
        assert "rank0.ctr" in p.stdout and "status:      clean" in p.stdout
    else:
        assert "train_step" in p.stdout
    # --strict: any bad input is an error, and nothing is written.
    if out.exists():
        out.unlink()
    p = tool(*command(cmd, out, d, extra=["--strict"]))
    assert p.returncode == 1 and not out.exists() and "wrote" not in p.stderr
    assert all(n in p.stderr for n in ("rank1.ctr", "rank2.ctr", "rank3.ctr")), p.stderr
    if cmd in ("stats", "events", "info"):
        assert p.stdout == ""


def test_unusable_arguments_are_skipped_too(small, tmp_path):
    (tmp_path / "empty").mkdir()
    out = tmp_path / "o.json"
    p = tool("convert", "-o", out, small, tmp_path / "missing.ctr", tmp_path / "empty",
             "/dev/null")
    assert p.returncode == 0, p.stderr
    assert "3 of 4 inputs skipped" in p.stderr or "3 of 4 input" in p.stderr, p.stderr
    assert n_slices(load_json(out)) > 0


def test_nothing_usable_exits_1_and_writes_nothing(tmp_path):
    d = tmp_path / "job"
    d.mkdir()
    (d / "a.ctr").write_bytes(b"")
    (d / "b.ctr").write_bytes(b"x" * 100)
    out = tmp_path / "o.json"
    for cmd in COMMANDS:
        p = tool(*command(cmd, out, d))
        assert p.returncode == 1, (cmd, p.stderr)
        assert "no usable input" in p.stderr and "wrote" not in p.stderr, p.stderr
        assert not out.exists()


def test_unreadable_file_as_a_user(small, tmp_path):
    """Permission denied on one rank's file (as an unprivileged user: root
    reads anything)."""
    if os.getuid() != 0 and not os.access(small, os.R_OK):
        pytest.skip("cannot arrange")
    import tempfile
    top = tempfile.mkdtemp(prefix="ct-perm-")
    try:
        os.chmod(top, 0o777)
        shutil.copy(small, f"{top}/rank0.ctr")
        shutil.copy(small, f"{top}/rank1.ctr")
        os.chmod(f"{top}/rank0.ctr", 0o644)
        os.chmod(f"{top}/rank1.ctr", 0o000)
        kw = {"user": 65534, "group": 65534, "extra_groups": []} if os.getuid() == 0 else {}
        if not kw:
            pytest.skip("needs root to switch to an unprivileged user")
        p = run([TOOL, "convert", "-o", f"{top}/o.json", top], env=base_env(), cwd=top, **kw)
        assert p.returncode == 0, p.stderr
        assert "rank1.ctr" in p.stderr and "Permission denied" in p.stderr, p.stderr
        assert n_slices(load_json(f"{top}/o.json")) > 0
    finally:
        shutil.rmtree(top)


# ---- exact duplicates are ignored with a warning

def test_duplicates_are_ignored(small, tmp_path):
    out = tmp_path / "o.json"
    once = tool("stats", "--report", "nvtx_sum", "--format", "json", small, check=True)
    copy = tmp_path / "copy" / "same.ctr"
    copy.parent.mkdir()
    shutil.copy(small, copy)
    for inputs in ([small, small], [small, copy], [small, copy.parent, small]):
        p = tool("stats", "--report", "nvtx_sum", "--format", "json", *inputs)
        assert p.returncode == 0, p.stderr
        assert nvtx_counts(p.stdout) == nvtx_counts(once.stdout)
        assert "duplicate" in p.stderr, p.stderr
        assert sum("duplicate of" in l for l in p.stderr.splitlines()) == len(inputs) - 1, p.stderr
        c = tool("convert", "-o", out, *inputs)
        assert c.returncode == 0 and "duplicate" in c.stderr
        doc = load_json(out)
        assert len(doc["cuptrace"]["files"]) == 1
        assert n_slices(doc) == n_slices(load_json(tool_convert(small, tmp_path)))
        i = tool("info", *inputs)
        assert i.returncode == 0 and "duplicate" in i.stderr
        assert i.stdout.count("file:") == 1  # one file left: the detail view


def test_a_cut_copy_does_not_replace_the_whole_file(small, tmp_path):
    """Of two copies of one process's file, the whole one is read, whatever
    the order (a copy cut short, named first, is not kept over it)."""
    d = tmp_path / "d"
    d.mkdir()
    data = small.read_bytes()
    (d / "a_cut.ctr").write_bytes(data[:len(data) // 2])
    (d / "b_whole.ctr").write_bytes(data)
    for inputs in ([d], [d / "a_cut.ctr", d / "b_whole.ctr"]):
        p = tool("info", *inputs)
        assert p.returncode == 0, p.stderr
        assert "a_cut.ctr: duplicate of" in p.stderr and "status:      clean" in p.stdout, p


def test_a_link_back_up_the_tree_is_walked_once(small, tmp_path):
    """`ln -s . d/self`: the directory walk visits d once, rather than
    down to its depth limit once per link at every level (five links would
    give 488,280 warnings)."""
    d = tmp_path / "d"
    d.mkdir()
    shutil.copy(small, d / "r0.ctr")
    for i in range(12):
        (d / f"self{i}").symlink_to(".")
    p = tool("info", str(d), timeout=20)
    assert p.returncode == 0 and p.stderr == "" and p.stdout.count("file:") == 1, p


def tool_convert(f, tmp_path):
    out = tmp_path / "single.json"
    if not out.exists():
        tool("convert", "-o", out, f, check=True)
    return out


def test_other_ranks_are_not_duplicates(small, tmp_path):
    files = rank_files(small, tmp_path / "job", 3)
    p = tool("stats", "--report", "nvtx_sum", "--format", "json", tmp_path / "job")
    assert p.returncode == 0 and "duplicate" not in p.stderr, p.stderr
    assert nvtx_counts(p.stdout)[":train_step"] == 3 * len(files)


# ---- thousands of ranks, a bounded number of open files

NRANKS = 5000
NOFILE = 256


def limited():
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))


def test_thousands_of_ranks_under_a_small_open_file_limit(small, tmp_path):
    job = tmp_path / "job"
    t0 = time.monotonic()
    rank_files(small, job, NRANKS)
    per_file = nvtx_counts(tool("stats", "--report", "nvtx_sum", "--format", "json", small,
                                check=True).stdout)
    ranges_per_file = sum(per_file.values())
    env = base_env()

    def go(*args):
        p = run([TOOL, *args], env=env, timeout=300, preexec_fn=limited)
        assert p.returncode == 0, (args, p.stderr[-2000:])
        assert "Too many open files" not in p.stderr
        return p

    # convert: one timeline, every rank's process and events.
    go("convert", "-o", tmp_path / "all.json", job)
    doc = load_json(tmp_path / "all.json")
    assert len(doc["cuptrace"]["files"]) == NRANKS
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e.get("ph") == "M" and e["name"] == "process_name"}
    assert sorted(int(n.split()[1]) for n in names.values()) == list(range(NRANKS))
    per_pid = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "user_annotation":
            per_pid[e["pid"]] = per_pid.get(e["pid"], 0) + 1
    assert set(per_pid) == set(names) and set(per_pid.values()) == {ranges_per_file}
    del doc

    # convert --split-ranks: one file per rank, each complete.
    go("convert", "--split-ranks", tmp_path / "split", job)
    split = sorted(os.listdir(tmp_path / "split"))
    assert split == sorted(f"rank{r}.json" for r in range(NRANKS))
    for r in range(0, NRANKS, 97):
        d = load_json(tmp_path / "split" / f"rank{r}.json")
        assert d["distributedInfo"]["rank"] == r
        assert sum(1 for e in d["traceEvents"]
                   if e.get("ph") == "X" and e.get("cat") == "user_annotation") == ranges_per_file

    # stats: every rank counted.
    p = go("stats", "--report", "nvtx_sum", "--format", "json", job)
    assert nvtx_counts(p.stdout) == {k: v * NRANKS for k, v in per_file.items()}

    # info: one row per rank, all clean, none missing.
    p = go("info", job)
    rows = [l for l in p.stdout.splitlines() if l.strip() and l.split()[0].isdigit()]
    assert len(rows) == NRANKS and all("clean" in r for r in rows)
    assert "missing ranks" not in p.stdout

    # events: every rank's ranges.
    p = go("events", job)
    files = {l.split("\t")[0] for l in p.stdout.splitlines()[1:] if "\tslice\tnvtx\t" in l}
    assert len(files) == NRANKS
    took = time.monotonic() - t0
    print(f"{NRANKS} rank files, every command: {took:.1f} s")
