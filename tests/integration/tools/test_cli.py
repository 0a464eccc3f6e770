# SPDX-License-Identifier: MIT
"""The command line: usage errors exit 2, --help and --version, default
output names, an output that is an input and options that would be ignored
refused, a failed write said and exit 1, progress on a terminal."""
import re
import shutil
import subprocess

import pytest

from conftest import TOOL, base_env, load_json, run, tool


def test_usage_errors_exit_2(demo_trace):
    f = demo_trace
    assert tool().returncode == 2
    assert tool("frobnicate").returncode == 2
    assert tool("convert").returncode == 2
    assert tool("convert", "-o", "x.pdf", f).returncode == 2
    assert tool("convert", "--bogus", f).returncode == 2
    assert tool("info").returncode == 2
    for c in ("run", "convert", "info", "stats"):
        p = tool(c, "--help")
        assert p.returncode == 0 and "usage: cuptrace" in p.stdout
    v = tool("--version")
    assert v.returncode == 0 and re.match(r"cuptrace \d+\.\d+\.\d+", v.stdout)


def test_default_output_name(demo_trace, tmp_path):
    f = demo_trace
    g = tmp_path / "x.ctr"
    shutil.copy(f, g)
    p = run([TOOL, "convert", g], env=base_env(), cwd=tmp_path)
    assert p.returncode == 0
    assert load_json(tmp_path / "x.json")["traceEvents"]
    # a directory named "." is named by its own name (not "..json", hidden)
    (tmp_path / "job").mkdir()
    shutil.copy(f, tmp_path / "job" / "r0.ctr")
    p = run([TOOL, "convert", "."], env=base_env(), cwd=tmp_path / "job")
    assert p.returncode == 0 and "wrote job.json" in p.stderr, p.stderr
    assert load_json(tmp_path / "job" / "job.json")["traceEvents"]
    p = run([TOOL, "export", "."], env=base_env(), cwd=tmp_path / "job")
    assert p.returncode == 0 and (tmp_path / "job" / "job.sqlite").exists(), p.stderr


@pytest.mark.parametrize("cmd,name", [(["export", "-o"], "a.sqlite"), (["report", "-o"], "a.ctr"),
                                      (["convert", "-o"], "a.json"),
                                      (["convert", "-o"], "a.sqlite"),
                                      (["convert", "-o"], "a.pftrace")])
def test_an_output_that_is_an_input_is_refused(demo_trace, tmp_path, cmd, name):
    """`-o` naming one of the inputs (given itself, or inside a directory
    given) would replace the only copy of a rank's trace with the output:
    refused, exit 2, the trace untouched."""
    f = demo_trace
    data = f.read_bytes()
    (tmp_path / "d").mkdir()
    inp = tmp_path / "d" / name
    inp.write_bytes(data)
    # a directory gives its .ctr files only
    for given in (inp, tmp_path / "d") if name.endswith(".ctr") else (inp,):
        p = tool(*cmd, str(inp), str(given))
        assert p.returncode == 2, p.stderr
        assert f"the output {inp} is the input {inp}; not overwritten" in p.stderr, p.stderr
        assert inp.read_bytes() == data


@pytest.mark.parametrize("args,why", [
    (["convert", "-z", "-o", "OUT.json"], "-z goes with --split-ranks"),
    (["convert", "--pftrace-plain", "-o", "OUT.json"], "--pftrace-plain goes with -o OUT.pftrace"),
    (["export", "-o", "OUT.json"], "export writes an SQLite database: name it OUT.sqlite"),
    (["stats", "--report", ""], "--report needs report names"),
    (["stats", "--steps", "18446744073709551616"], "--steps 18446744073709551616: expected"),
    (["convert", "-o"], "cuptrace convert: option requires an argument -- 'o'"),
])
def test_options_that_would_be_ignored_are_refused(demo_trace, tmp_path, args, why):
    """Options that would do nothing where they are given (or an
    out-of-range number that would be taken as the largest) are usage
    errors; getopt's own messages name the command as ours do."""
    f = demo_trace
    args = [str(tmp_path / a) if a.startswith("OUT.") else a for a in args]
    p = tool(*args, *([] if args[-1] == "-o" else [str(f)]))
    assert p.returncode == 2 and why in p.stderr, p.stderr
    assert not list(tmp_path.iterdir())


def test_a_write_error_is_reported(demo_trace):
    """Output is written by a thread of its own: a failing write must still
    reach the exit status and one line on stderr."""
    f = demo_trace
    with open("/dev/full", "w") as full:
        p = subprocess.run([str(TOOL), "convert", "-o", "-", str(f)], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=60)
    assert p.returncode == 1
    assert p.stderr.strip().splitlines() == ["cuptrace: writing -: No space left on device"]


def test_a_long_conversion_shows_progress_on_a_terminal(tmp_path):
    """Progress on stderr when a conversion runs longer than a second on a
    terminal, with -j 1 too, where the calling thread converts a share
    itself and must look at the clock while it does."""
    import os
    import pty
    from conftest import BUILD
    trace = tmp_path / "g.ctr"
    run([BUILD / "bench" / "cupti_bench", trace, "1500000", "1"], check=True)
    master, slave = pty.openpty()
    p = subprocess.Popen([str(TOOL), "convert", "-j", "1", "-o", str(tmp_path / "g.json.gz"),
                          str(trace)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=slave)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the program closed its end
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    assert p.wait(timeout=60) == 0, err
    lines = err.decode().replace("\r\n", "\n").split("\r")
    assert any(l.startswith("converting: ") and l.endswith(" events...") for l in lines), err
    assert "events in " in err.decode() and "wrote " in err.decode(), err


def test_small_cli_promises(demo_trace, tmp_path):
    """Small promises of the commands' help and messages."""
    f = demo_trace
    # `cuptrace help CMD` is CMD's help, not the general one
    p = tool("help", "stats")
    assert p.returncode == 0 and p.stdout.startswith("usage: cuptrace stats"), p.stdout
    # events on a file without its footer says so, as convert and stats do
    cut = tmp_path / "cut.ctr"
    cut.write_bytes(f.read_bytes()[:-16])
    p = tool("events", cut)
    assert p.returncode == 0 and "warning:" in p.stderr and "truncated" in p.stderr, p.stderr
    # a page on stdout: no "wrote -"
    p = tool("report", "-o", "-", f)
    assert p.returncode == 0 and p.stdout.startswith("<!DOCTYPE html>") and "wrote" not in p.stderr
    # seconds are decimal: 0x10 is refused, not taken as 16 s (strtod's hex)
    p = tool("run", "--hang-timeout", "0x10", "--", "true")
    assert p.returncode == 2 and "CUPTRACE_HANG_TIMEOUT=0x10" in p.stderr, p.stderr
