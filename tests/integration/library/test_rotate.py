# SPDX-License-Identifier: MIT
"""cuptrace_rotate(): a window's file finished, recording going on into the
next one. tests/progs/rotate_threads marks from several threads while the
main thread rotates; every mark must land in exactly one file, in order,
and each file must read on its own."""
import re

from conftest import PROGS, TOOL, convert, ctr_files, run, traced_env

THREADS, ROTATIONS = 4, 4


def test_rotation_loses_and_repeats_nothing(tmp_path):
    out = tmp_path / "out"
    env = traced_env(out)
    env["CUPTRACE_OUTPUT"] = f"{out}/r.ctr"
    p = run([PROGS / "rotate_threads", THREADS, ROTATIONS], env=env, timeout=120, check=True)
    rotated = re.findall(r"^rotated (.*)$", p.stdout, re.M)
    counts = {f"t{i}": int(n) for i, n in re.findall(r"^t(\d+) (\d+)$", p.stdout, re.M)}
    assert len(counts) == THREADS and all(n >= 2000 for n in counts.values())
    # The usual name, then ".w2", ".w3", ... before the extension; each
    # rotation hands back the file it finished.
    names = [f"r.ctr"] + [f"r.w{k}.ctr" for k in range(2, ROTATIONS + 2)]
    assert sorted(f.name for f in ctr_files(out)) == sorted(names)
    assert rotated == [str(out / n) for n in names[:-1]]

    seen = {}  # thread -> [(file index, n)]
    for k, name in enumerate(names):
        info = run([TOOL, "info", out / name], check=True).stdout
        # A rotated file is finished as at exit: footer, no drops.
        if k < ROTATIONS:
            assert f"ended:       rotated (file {k + 1} of the process" in info
        else:
            assert "ended:       exit" in info
        assert "dropped 0" in info and not re.search(r"dropped [1-9]", info)
        # Each file converts alone, its threads named.
        doc = convert([out / name], tmp_path / f"{k}.json")
        tnames = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"]
                  if e.get("ph") == "M" and e.get("name") == "thread_name"}
        for e in doc["traceEvents"]:
            if e.get("ph") != "i":
                continue
            who, n = e["name"].split()
            assert tnames.get(e["tid"]) == "rec-" + who[1:], (name, e)
            seen.setdefault(who, []).append((k, int(n)))
    for who, count in counts.items():
        marks = seen[who]
        # Exactly once each, and files in the order of recording.
        assert sorted(n for _, n in marks) == list(range(count)), who
        assert sorted(marks, key=lambda m: m[1]) == sorted(marks), who
    # Rotations came while the threads recorded: several files hold marks.
    assert len({k for marks in seen.values() for k, _ in marks}) >= 3

    # Given together, the windows are parts of one process, not copies of
    # one file: every mark once in one trace, one split file per window.
    p = run([TOOL, "convert", "-o", tmp_path / "all.json", out], check=True)
    assert "duplicate" not in p.stderr, p.stderr
    doc = convert([out], tmp_path / "all.json")
    together = sorted(e["name"] for e in doc["traceEvents"] if e.get("ph") == "i")
    assert together == sorted(f"{who} {n}" for who, c in counts.items() for n in range(c))
    run([TOOL, "convert", "--split-ranks", tmp_path / "split", out], check=True)
    split = sorted(f.name for f in (tmp_path / "split").iterdir())
    # no rank: one process, one number (as in the merged trace's names), its
    # windows apart
    assert split == ["rank0.json"] + [f"rank0.w{k}.json" for k in range(2, ROTATIONS + 2)]
    procs = {e["args"]["name"] for e in doc["traceEvents"]
             if e.get("ph") == "M" and e["name"] == "process_name"}
    assert len(procs) == 1 and procs.pop().startswith("rank 0 ("), procs


def test_rotate_without_tracing_returns_none(tmp_path):
    env = traced_env(tmp_path / "out")
    env["CUPTRACE_RANKS"] = "5"  # not this process's rank: not tracing
    env["RANK"] = "0"
    p = run([PROGS / "rotate_threads", 1, 2], env=env, timeout=120, check=True)
    assert re.findall(r"^rotated (.*)$", p.stdout, re.M) == ["none", "none"]
    assert ctr_files(tmp_path / "out") == []


def test_window_files_follow_the_first_files_actual_name(tmp_path):
    # The usual name is taken: the first file gets a numbered one, and the
    # window files are named after that one, not after the pattern.
    out = tmp_path / "out"
    out.mkdir()
    (out / "r.ctr").write_bytes(b"not ours")
    env = traced_env(out)
    env["CUPTRACE_OUTPUT"] = f"{out}/r.ctr"
    p = run([PROGS / "rotate_threads", 1, 2], env=env, timeout=120, check=True)
    assert re.findall(r"^rotated (.*)$", p.stdout, re.M) == [str(out / "r.1.ctr"),
                                                             str(out / "r.1.w2.ctr")]
    assert (out / "r.ctr").read_bytes() == b"not ours"
    assert sorted(f.name for f in ctr_files(out)) == ["r.1.ctr", "r.1.w2.ctr", "r.1.w3.ctr", "r.ctr"]
