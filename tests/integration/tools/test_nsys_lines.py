# SPDX-License-Identifier: MIT
"""`nsys profile ...` lines of HPC centres' batch scripts run with
`nsys profile` replaced by `cuptrace run`, the rest of the line kept
(docs/cuptrace-run.md, "Coming from nsys profile"); and `cuptrace stats`
taking nsys stats's formats and report names."""
import csv
import re
import sqlite3
import subprocess

import pytest

from conftest import PROGS, SAN, TOOL, ctr_files, launcher_env, one_line_error, run, tool
from programs import SIM_TRAIN
from test_multirank import ITERS, SLOW, mpi_env, mpiexec, needs_mpi

GEMM = "void gemm_tiled<128>(float const*, float const*, float*, int, int, int)"
ARGV = ["python3", "-c", "import sys; print('\\n'.join(sys.argv[1:]))"]


def launch(args, cwd, env=None, **kw):
    return run([TOOL, "run", *args], env=env or launcher_env(), cwd=cwd, **kw)


def notes(stderr):
    return [l for l in stderr.splitlines() if l.startswith("cuptrace run: note: ")]


def settings(f):
    """The CUPTRACE_* settings the file's process ran with (cuptrace info)."""
    out = tool("info", f).stdout
    return dict(re.findall(r"^  (CUPTRACE_\w+)=(.*)$", out, re.M))


def kernels(db):
    with sqlite3.connect(db) as c:
        return c.execute("SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                         "JOIN StringIds s ON s.id = k.demangledName GROUP BY 1").fetchall()


def test_stats_true_trace_osrt_and_force_overwrite(tmp_path):
    """nsys profile -t cuda,nvtx,osrt --stats=true -o report_%q{OMPI_COMM_WORLD_RANK}
    --force-overwrite=true ./app: osrt and -f said once each; the file gets
    .ctr; the tables follow CMD; a second run keeps the first file (cuptrace
    never overwrites a trace) and says where it wrote instead."""
    env = launcher_env(OMPI_COMM_WORLD_RANK=0, OMPI_COMM_WORLD_SIZE=1, CUPTI_SIM_TRUTH=tmp_path / "s")
    line = ["-t", "cuda,nvtx,osrt", "--stats=true", "-o", "report_%q{OMPI_COMM_WORLD_RANK}",
            "--force-overwrite=true", SIM_TRAIN, "train", "5"]
    p = launch(line, tmp_path, env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("sim_train train done\n")
    n = notes(p.stderr)
    assert len(n) == 2, p.stderr
    assert "--trace=cuda,nvtx,osrt: osrt left out" in n[0]
    assert "--force-overwrite=true: ignored (cuptrace never overwrites a trace" in n[1]
    assert "** cuda_gpu_kern_sum" in p.stdout and "** nvtx_sum" in p.stdout
    assert "cuptrace run --stats: 1 trace file" in p.stderr
    assert sorted(x.name for x in tmp_path.glob("report*")) == ["report_0.ctr"]
    assert settings(tmp_path / "report_0.ctr")["CUPTRACE_TRACE"] == "kernel,memcpy,api,sync,nvtx"
    first = (tmp_path / "report_0.ctr").read_bytes()
    p = launch(line, tmp_path, env)
    assert p.returncode == 0 and "report_0.1.ctr" in p.stderr, p.stderr
    assert (tmp_path / "report_0.ctr").read_bytes() == first
    assert "cuptrace run --stats: 1 trace file" in p.stderr  # its own run's file alone


def test_cuda_profiler_api_range_exported_per_rank(tmp_path):
    """nsys profile --trace=cuda,nvtx,mpi --capture-range=cudaProfilerApi
    --capture-range-end=stop -o r%q{PMI_RANK} --export=sqlite ./app, run by
    two ranks at once: each rank writes r<rank>.ctr and exports its own
    r<rank>.sqlite, which holds the 7 kernels launched between
    cudaProfilerStart and Stop and none of the 9 outside. A database left
    there by an older run is replaced by the one of the new trace."""
    (tmp_path / "r0.sqlite").write_text("an older run's")
    line = ["--trace=cuda,nvtx,mpi", "--capture-range=cudaProfilerApi", "--capture-range-end=stop",
            "-o", "r%q{PMI_RANK}", "--export=sqlite", SIM_TRAIN, "window"]
    procs = [subprocess.Popen([str(a) for a in (TOOL, "run", *line)], cwd=tmp_path,
                              env=launcher_env(PMI_RANK=r, PMI_SIZE=2,
                                               CUPTI_SIM_TRUTH=tmp_path / f"s{r}"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(2)]
    for r, p in enumerate(procs):
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0 and out == "sim_train window done\n", err
        assert [l for l in err.splitlines() if "wrote" in l] == \
            [f"cuptrace: wrote {tmp_path}/r{r}.sqlite"], err
        assert notes(err) == [], err  # mpi is cuptrace's too
    assert sorted(x.name for x in tmp_path.glob("r*")) == ["r0.ctr", "r0.sqlite", "r1.ctr",
                                                            "r1.sqlite"]
    for r in range(2):
        assert settings(tmp_path / f"r{r}.ctr")["CUPTRACE_CAPTURE"] == "api"
        assert settings(tmp_path / f"r{r}.ctr")["CUPTRACE_TRACE"] == \
            "kernel,memcpy,api,sync,nvtx,mpi"
        assert kernels(tmp_path / f"r{r}.sqlite") == [(GEMM, 7)]
        with sqlite3.connect(tmp_path / f"r{r}.sqlite") as c:
            assert c.execute("SELECT rank FROM CUPTRACE_RANKS").fetchall() == [(r,)]


def test_no_sampling_memory_usage_duration_and_delay(tmp_path):
    """nsys profile -s none -t nvtx,cuda --cuda-memory-usage=true -d 30 -y 5
    -o out ./app: -s none asks for nothing; memory joins the sources; the
    delay and duration are the file's; -d says once that CMD is not ended
    after 30 s, as nsys would end it."""
    p = launch(["-s", "none", "-t", "nvtx,cuda", "--cuda-memory-usage=true", "-d", "30", "-y",
                "5", "-o", "out", SIM_TRAIN, "train", "5"], tmp_path,
               launcher_env(CUPTI_SIM_TRUTH=tmp_path / "s"))
    assert p.returncode == 0, p.stderr
    [n] = notes(p.stderr)
    assert "-d 30: capture stops after 30 s and CMD runs on to its own end" in n
    assert [x.name for x in tmp_path.glob("out*")] == ["out.ctr"]
    s = settings(tmp_path / "out.ctr")
    assert s["CUPTRACE_TRACE"] == "kernel,memcpy,api,sync,memory,nvtx", s
    assert (s["CUPTRACE_DELAY"], s["CUPTRACE_DURATION"]) == ("5", "30")
    # with the delay over while the program runs: only the steps after it;
    # with --kill none, -d is what nsys does: nothing said
    p = launch(["-s", "none", "-t", "nvtx", "-y", "0.2", "-d", "30", "-o", "late", "--kill",
                "none", PROGS / "demo_train", "3000"], tmp_path)
    assert p.returncode == 0 and notes(p.stderr) == [], p.stderr
    steps = tool("stats", "-r", "nvtx_sum", "-f", "csv", tmp_path / "late.ctr").stdout
    n = int(next(r for r in csv.DictReader(l for l in steps.splitlines() if not l.startswith("#"))
                 if r["Range"] == ":train_step")["Instances"])
    assert 0 < n < 3000, steps


@pytest.mark.parametrize("end,windows", [("stop", 1), ("repeat:2", 2), ("repeat", 5),
                                         ("repeat-shutdown:3", 3)])
def test_nvtx_capture_range_windows(tmp_path, end, windows):
    """-c nvtx -p RANGE --capture-range-end=...: the NVTX range opens
    capture; stop keeps the first, repeat:N the first N, repeat all."""
    p = launch(["-c", "nvtx", "-p", "train_step@*", f"--capture-range-end={end}", "-t", "nvtx",
                "-o", "t", PROGS / "demo_train", "5"], tmp_path)
    assert p.returncode == 0 and notes(p.stderr) == [], p.stderr
    s = settings(tmp_path / "t.ctr")
    assert s["CUPTRACE_CAPTURE"] == "nvtx:train_step"
    out = tool("stats", "-r", "nvtx_sum", "-f", "csv", tmp_path / "t.ctr").stdout
    rows = {r["Range"]: int(r["Instances"])
            for r in csv.DictReader(l for l in out.splitlines() if not l.startswith("#"))}
    assert rows[":train_step"] == windows
    # events only inside the windows: each step's ranges, no more
    assert rows[":forward"] == rows[":backward"] == rows[":layer 0"] == windows, rows


def test_nvtx_capture_in_a_domain_and_the_default_domain_said(tmp_path):
    p = launch(["--capture-range=nvtx", "--nvtx-capture=load batch@dataloader", "-t", "nvtx",
                "-o", "d", PROGS / "demo_train", "3"], tmp_path)
    assert p.returncode == 0 and notes(p.stderr) == [], p.stderr
    assert settings(tmp_path / "d.ctr")["CUPTRACE_CAPTURE"] == "nvtx:load batch@dataloader"
    p = launch(["-c", "nvtx", "-p", "train_step", "-t", "nvtx", "-o", "e", PROGS / "demo_train",
                "3"], tmp_path)
    [n] = notes(p.stderr)
    assert p.returncode == 0 and "-p train_step: a range train_step in any NVTX domain" in n
    p = launch(["-c", "nvtx", "-o", "f", "--", "true"], tmp_path)
    assert p.returncode == 2 and "--capture-range=nvtx needs -p/--nvtx-capture" in p.stderr


def test_cmd_arguments_that_look_like_options_reach_cmd(tmp_path):
    """Every nsys option takes its value (or, true/false ones, the next
    true or false) and CMD is the first argument after them: CMD's own
    arguments, options of nsys's or ours among them, reach it unchanged."""
    args = ["-o", "x", "-t", "osrt", "--stats=true", "-f", "true", "--capture-range=nvtx", "--",
            "-p", "y"]
    for line in (["-f", "-w", "true", "--stats", "true", "-x", "--session-new", "s 1",
                  "--mpi-impl", "openmpi", "-o", "a", "-s", "none"],
                 ["--force-overwrite", "true", "--trace-fork-before-exec=true", "--wait", "all",
                  "--kill", "none", "--cudabacktrace", "all", "--backtrace", "dwarf",
                  "--osrt-threshold", "10000", "-o", "b/", "--"]):
        p = launch(line + ARGV + args, tmp_path)
        assert p.returncode == 0, p.stderr
        assert p.stdout.splitlines()[:len(args)] == args, (line, p.stdout)
    n = notes(p.stderr)  # the second line's: each option said once, kill none and fork not
    for opt in ("--wait=all", "--cudabacktrace=all", "--backtrace=dwarf", "--osrt-threshold=10000",
                "--force-overwrite=true"):
        assert sum(l.startswith(f"cuptrace run: note: {opt}: ") for l in n) == 1, (opt, n)
    assert len(n) == 5, n
    # -b and -c: cuptrace's --buffer-mb and --capture, or nsys's --backtrace
    # and --capture-range, as the value says
    p = launch(["-b", "32", "-c", "always", "-b", "lbr", "-c", "none", "-o", "c",
                PROGS / "demo_train", "1"], tmp_path)
    n = notes(p.stderr)
    assert p.returncode == 0 and len(n) == 2, p.stderr
    assert n[0].startswith("cuptrace run: note: --backtrace=lbr: ignored")
    assert "--capture-range=none: -c/--capture always is taken" in n[1]
    s = settings(tmp_path / "c.ctr")
    assert (s["CUPTRACE_BUFFER_MB"], s["CUPTRACE_CAPTURE"]) == ("32", "always")


def test_each_note_once_and_env_var(tmp_path):
    p = launch(["--gpu-metrics-devices=all", "--gpu-metrics-devices", "0", "--export=text",
                "--export", "hdf,sqlite", "-t", "osrt", "-t", "nvtx,cudnn,osrt,ucx", "-e",
                "A_X=1,B_Y=p,q", "-o", "e", "--", "sh", "-c", 'echo "$A_X|$B_Y"'], tmp_path)
    assert p.returncode == 0 and p.stdout == "1|p,q\n", p.stderr
    n = notes(p.stderr)
    assert len(n) == 5, n
    assert n[0].startswith("cuptrace run: note: --gpu-metrics-devices=all: ignored")
    assert n[1].startswith("cuptrace run: note: --export=text: text left out")
    assert n[2].endswith("--trace=osrt: osrt left out (tracers cuptrace has not)")
    assert n[3].endswith("--trace=nvtx,cudnn,osrt,ucx: ucx left out (tracers cuptrace has not)")
    assert "--trace=nvtx,cudnn,osrt,ucx: cudnn: their CUDA work is traced (cuda)" in n[4], n
    # sh records nothing: no file, and nothing to export, said
    assert ctr_files(tmp_path) == [] and "--export: no trace file was written" in p.stderr


def test_trace_names_of_neither_are_refused(tmp_path):
    marker = tmp_path / "ran"
    for value in ("cuda,bogus", "none,cuda"):
        p = launch(["-t", value, "--", "touch", marker], tmp_path)
        assert p.returncode == 2, p.stderr
        one_line_error(p.stderr, "CUPTRACE_TRACE")
    for bad, why in ((["--capture-range=later"], "expected none, cudaProfilerApi, nvtx or hotkey"),
                     (["--capture-range-end=repeat-shutdown"], "expected none, stop"),
                     (["--export=pdf"], "expected sqlite"),
                     (["--force-overwrite=maybe"], "expected true or false"),
                     (["--stats=sometimes"], "unknown report"),
                     (["--command-file", "opts.txt"], "on the command line only")):
        p = launch(bad + ["--", "touch", marker], tmp_path)
        assert p.returncode == 2 and why in p.stderr, (bad, p.stderr)
    assert not marker.exists()


def test_output_names(tmp_path):
    """-o NAME gets .ctr as nsys adds .nsys-rep (and .nsys-rep becomes
    .ctr); a name with .ctr, a directory (ending in /, or existing) stay."""
    (tmp_path / "there").mkdir()
    for o, want in (("plain", "plain.ctr"), ("rep.nsys-rep", "rep.ctr"), ("has.ctr", "has.ctr"),
                    ("rname.%p", None), ("there", "there/"), ("dir/", "dir/")):
        p = launch(["-t", "nvtx", "-o", o, PROGS / "demo_train", "1"], tmp_path)
        assert p.returncode == 0 and notes(p.stderr) == [], p.stderr
        if want and want.endswith("/"):
            [f] = ctr_files(tmp_path / want)
            assert f.name.endswith(".ctr")
        elif want:
            assert (tmp_path / want).is_file(), o
        else:
            [f] = tmp_path.glob("rname.*.ctr")


def test_own_spelling_wins_over_nsys(tmp_path):
    p = launch(["--capture-repeat", "0", "-c", "always", "--capture-range=cudaProfilerApi",
                "--capture-range-end=stop", "-o", "o", PROGS / "demo_train", "1"], tmp_path)
    n = notes(p.stderr)
    assert p.returncode == 0 and len(n) == 2, p.stderr
    assert "--capture-range=cudaProfilerApi: -c/--capture always is taken" in n[0]
    assert "--capture-range-end=stop: ignored (it applies to" in n[1]
    p = launch(["--capture-repeat", "0", "--capture-range=cudaProfilerApi",
                "--capture-range-end=stop", "-o", "p", SIM_TRAIN, "window"], tmp_path)
    [n] = notes(p.stderr)
    assert p.returncode == 0 and "--capture-range-end=stop: --capture-repeat 0 is taken" in n
    s = settings(tmp_path / "p.ctr")
    assert (s["CUPTRACE_CAPTURE"], s["CUPTRACE_CAPTURE_REPEAT"]) == ("api", "0")


def test_kill_and_stats_false(tmp_path):
    p = launch(["--kill", "sigterm", "-d", "5", "--stats=false", "-o", "k", PROGS / "demo_train",
                "1"], tmp_path)
    [n] = notes(p.stderr)
    assert p.returncode == 0 and "--kill=sigterm: ignored (cuptrace sends CMD no signal" in n
    assert "--stats" not in p.stderr and "**" not in p.stdout
    p = launch(["--stats=gpukernsum,osrt_sum", "-o", "g", SIM_TRAIN, "small"], tmp_path,
               launcher_env(CUPTI_SIM_TRUTH=tmp_path / "s"))
    assert p.returncode == 0 and "** cuda_gpu_kern_sum" in p.stdout, p.stderr
    assert "osrt_sum is an nsys report cuptrace has not" in p.stderr


# ---- cuptrace stats


@pytest.fixture(scope="module")
def sim_trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("sim")
    p = launch(["-o", "t.ctr", SIM_TRAIN, "train", "5"], d, launcher_env(CUPTI_SIM_TRUTH=d / "s"))
    assert p.returncode == 0, p.stderr
    return d / "t.ctr"


def test_stats_column_and_tsv(sim_trace, tmp_path):
    column = tool("stats", "-f", "column", sim_trace)
    assert column.returncode == 0 and column.stdout == tool("stats", sim_trace).stdout
    tsv = tool("stats", "-r", "cuda_gpu_kern_sum", "-f", "tsv", sim_trace).stdout
    csv_ = tool("stats", "-r", "cuda_gpu_kern_sum", "-f", "csv", sim_trace).stdout
    rows = [l for l in tsv.splitlines() if not l.startswith("#")]
    assert list(csv.reader(rows, delimiter="\t")) == list(
        csv.reader(l for l in csv_.splitlines() if not l.startswith("#")))
    assert rows[0].split("\t")[-1] == "Name" and len(rows) > 2
    p = tool("stats", "-r", "cuda_gpu_kern_sum", "-f", "tsv", "-o", tmp_path / "j", sim_trace)
    assert p.returncode == 0 and (tmp_path / "j_cuda_gpu_kern_sum.tsv").read_text() == \
        "\n".join(rows) + "\n"
    p = tool("stats", "-f", "hdoc", sim_trace)
    assert p.returncode == 2 and "nsys's HTML formats are not cuptrace's" in p.stderr


def test_stats_nsys_report_names(sim_trace):
    old = tool("stats", "-r", "gpukernsum,cudaapisum,gpumemtimesum,gpumemsizesum,nvtxsum",
               sim_trace)
    new = tool("stats", "-r", "cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum,"
               "cuda_gpu_mem_size_sum,nvtx_sum", sim_trace)
    assert old.returncode == 0 and old.stdout == new.stdout and old.stderr == ""
    p = tool("stats", "-r", "osrt_sum,cuda_gpu_kern_sum,cuda_gpu_trace", sim_trace)
    assert p.returncode == 0 and "** cuda_gpu_kern_sum" in p.stdout
    assert p.stderr.count("is an nsys report cuptrace has not") == 2, p.stderr
    assert "osrt_sum is an nsys report cuptrace has not (cuptrace does not trace OS runtime" \
        in p.stderr and "cuptrace events lists every event" in p.stderr
    p = tool("stats", "-r", "osrt_sum", sim_trace)
    assert p.returncode == 2 and p.stdout == ""


def test_stats_on_an_export_says_what_to_give(sim_trace, tmp_path):
    assert tool("export", "-o", tmp_path / "t.sqlite", sim_trace).returncode == 0
    (tmp_path / "t.ctr").write_bytes(sim_trace.read_bytes())
    p = tool("stats", tmp_path / "t.sqlite")
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr == (f"cuptrace stats: {tmp_path}/t.sqlite is an SQLite database (nsys stats "
                        f"reads those); cuptrace stats reads the trace it was exported from: "
                        f"{tmp_path}/t.ctr\n")
    (tmp_path / "t.ctr").unlink()
    p = tool("stats", tmp_path / "t.sqlite", sim_trace)
    assert p.returncode == 1 and p.stderr.endswith("exported from: the .ctr file\n"), p.stderr


@needs_mpi
def test_an_open_mpi_job_exports_each_rank_and_summarises_once(tmp_path):
    """mpiexec -n 4 nsys profile -t cuda,nvtx,osrt --stats=true --export=sqlite
    -o report_%q{OMPI_COMM_WORLD_RANK} ./app: four databases, each of its
    rank alone, and the job's tables printed once."""
    env = mpi_env()
    if SAN:
        env["LD_PRELOAD"] = launcher_env()["LD_PRELOAD"]
    p = mpiexec([TOOL, "run", "-t", "cuda,nvtx,osrt", "--stats=true", "--export=sqlite", "-o",
                 f"{tmp_path}/report_%q{{OMPI_COMM_WORLD_RANK}}", PROGS / "mpi_ranks", ITERS, SLOW],
                env)
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == [
        f"report_{r}.{e}" for r in range(4) for e in ("ctr", "sqlite")]
    assert p.stdout.count("** nvtx_sum") == 1 and "cuptrace run --stats: 4 trace files" in p.stderr
    assert p.stderr.count("osrt left out") == 4  # once by each rank's cuptrace run
    for r in range(4):
        assert f"cuptrace: wrote {tmp_path}/report_{r}.sqlite" in p.stderr
        with sqlite3.connect(tmp_path / f"report_{r}.sqlite") as c:
            assert c.execute("SELECT rank, file FROM CUPTRACE_RANKS").fetchall() == [
                (r, f"{tmp_path}/report_{r}.ctr")]
            assert c.execute("SELECT count(*) FROM NVTX_EVENTS").fetchone()[0] > 0
