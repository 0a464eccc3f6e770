# SPDX-License-Identifier: MIT
"""`mpiexec -n N cuptrace stats|report|convert|export` (docs/parallel-tools.md):
the ranks share the files out (file i to rank i*N/files; --split-ranks:
whole outputs), rank 0 merges the reports' parts in file order (stats,
report) or each rank writes its rank files (--split-ranks) or a piece of
the merged output that rank 0 joins (-o); the output is the serial
command's, once, byte for byte, with the serial command's lines. Inputs:
16 ranks of the NCCL harness on the CUPTI simulator (no GPU), on two
simulated hosts whose clocks differ (the clocks table and the alignment
take part), a truncated copy of a rank's file and a corrupt block (their
lines must come once, in file order). Ranks started in two working
directories (MPMD) show which rank wrote what. Open MPI's mpiexec, and
MPICH's where installed; skipped without either."""
import re
import shutil
import subprocess

import pytest

from conftest import PROGS, TOOL, rewrite_header, tool
from mpi_jobs import mpi_env
from programs import SIM_TRAIN, sim_env
from test_report_html import run_job

WORLD = 16
SHIFT = 2_500_000  # ns: the second host's clock is ahead by this much
LAUNCHERS = {
    "openmpi": (shutil.which("mpiexec.openmpi") or shutil.which("orterun"), ["--oversubscribe"]),
    "mpich": (shutil.which("mpiexec.mpich") or shutil.which("mpiexec.hydra"), []),
}


def launchers():
    return [pytest.param(name, id=name, marks=pytest.mark.skipif(
        not exe, reason=f"{name}'s mpiexec not installed")) for name, (exe, _) in LAUNCHERS.items()]


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    d = tmp_path_factory.mktemp("mpitools")
    _, files = run_job(d, world=WORLD, iters=8)
    two = d / "two"
    two.mkdir()
    for f in files:
        r = int(re.search(r"rank(\d+)\.ctr$", f.name).group(1))
        anchor = int(re.search(r"started:\s+(\d+) ns", tool("info", str(f)).stdout).group(1))
        host = r // (WORLD // 2)
        (two / f.name).write_bytes(rewrite_header(f.read_bytes(), host=f"host{host}",
                                                  rt_anchor=anchor + SHIFT * host))
    cut = d / "cut" / "rank3.ctr"
    cut.parent.mkdir()
    data = (two / "rank3.ctr").read_bytes()
    cut.write_bytes(data[:len(data) * 2 // 3])
    return sorted(files), sorted(two.glob("*.ctr")), cut


def mpi(launcher, n, *args, timeout=120):
    exe, opts = LAUNCHERS[launcher]
    return subprocess.run([exe, *opts, "-n", str(n), str(TOOL), *args], env=mpi_env(),
                          capture_output=True, text=True, timeout=timeout)


def same_as_serial(launcher, args, ns=(2, 3, 4)):
    one = tool(*args)
    assert one.returncode in (0, 1), one.stderr
    for n in ns:
        p = mpi(launcher, n, *args)
        assert (p.returncode, p.stdout, p.stderr) == (one.returncode, one.stdout, one.stderr), n
    return one


@pytest.mark.parametrize("launcher", launchers())
def test_stats_of_a_16_rank_job_prints_the_serial_tables_once(job, launcher):
    files, _, _ = job
    one = same_as_serial(launcher, ["stats", *map(str, files)], ns=(2, 4, 5))
    for name in ["nvtx_sum", "cuda_gpu_kern_sum", "breakdown", "launch", "nccl_sum",
                 "steps", "nccl_skew"]:
        assert f"** {name}:" in one.stdout, name
    # the ranks did share the files out (-v says so, from rank 0 only)
    p = mpi(launcher, 4, "stats", "-v", "-r", "nvtx_sum", *map(str, files))
    assert p.returncode == 0, p.stderr
    assert p.stderr.count(f"4 MPI ranks: each reads its share of the {WORLD} files") == 1, p.stderr


@pytest.mark.parametrize("launcher", launchers())
def test_two_hosts_a_truncated_file_and_every_format(job, launcher):
    """The clocks table and the warning about the truncated file, once and
    where the serial command says it."""
    _, two, cut = job
    one = same_as_serial(launcher, ["stats", "-f", "csv", *map(str, two), str(cut)], ns=(3,))
    assert "clocks" in one.stdout and one.stderr.count("warning") == 1, one.stderr
    same_as_serial(launcher, ["stats", "-f", "json", "--by", "step,time", "--min-gap", "1us",
                              "--steps", "2-5", *map(str, two)], ns=(4,))


@pytest.mark.parametrize("launcher", launchers())
def test_report_draws_the_serial_page_once(job, launcher, tmp_path):
    """report: the ranks read their shares, rank 0 draws the page from the
    merged tables and from every file's counts and status (the header:
    events, drops, the truncated file), the serial page byte for byte."""
    _, two, cut = job
    args = [*(str(f) for f in two if f.name != cut.name), str(cut)]
    serial = tmp_path / "s.html"
    one = tool("report", "-j", "1", "-o", str(serial), *args)
    assert one.returncode == 0, one.stderr
    for n in (2, 3):
        par = tmp_path / f"p{n}.html"
        p = mpi(launcher, n, "report", "-j", "1", "-o", str(par), *args)
        assert p.returncode == 0, p.stderr
        assert par.read_bytes() == serial.read_bytes(), n
        assert p.stderr == one.stderr.replace(str(serial), str(par)), n
    assert "truncated" in one.stderr and "Truncated or damaged files" in serial.read_text()


def mpi_stderr(text):
    """stderr without the launcher's own words (Open MPI's boxes about a
    rank's exit status)."""
    return re.sub(r"-{20,}\n.*?-{20,}\n", "", text, flags=re.S)


def same_files(a, b):
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    return names


@pytest.fixture(scope="module")
def damaged(job, tmp_path_factory):
    """The 16 files of two hosts, rank 3's truncated and a block of rank
    9's corrupt (its message comes from the MPI rank that reads it)."""
    _, two, cut = job
    d = tmp_path_factory.mktemp("damaged")
    for f in two:
        data = bytearray(cut.read_bytes() if f.name == cut.name else f.read_bytes())
        if f.name == "rank9.ctr":
            data[3000:3100] = bytes(x ^ 0x5A for x in data[3000:3100])
        (d / f.name).write_bytes(bytes(data))
    return d


@pytest.mark.parametrize("launcher", launchers())
@pytest.mark.parametrize("gz", [False, True], ids=["json", "gz"])
def test_split_ranks_each_rank_writes_its_share(damaged, launcher, gz, tmp_path):
    """convert --split-ranks: each MPI rank converts its share of the
    outputs and writes them; the directory is the serial command's, file
    for file and byte for byte, its lines said once in the serial order
    (the corrupt block's from the rank that read it), a stale rank file
    of another conversion found once."""
    z = ["-z"] if gz else []
    serial = tmp_path / "s"
    serial.mkdir()
    (serial / "rank99.json").write_text("{}")
    one = tool("convert", "-j", "1", *z, "--split-ranks", str(serial), str(damaged))
    assert one.returncode == 1, one.stderr
    assert "damaged block" in one.stderr and "truncated" in one.stderr, one.stderr
    assert "also holds 1 rank file" in one.stderr, one.stderr
    for n in (2, 5):
        par = tmp_path / f"p{n}"
        par.mkdir()
        (par / "rank99.json").write_text("{}")
        p = mpi(launcher, n, "convert", "-j", "1", *z, "--split-ranks", str(par), str(damaged))
        assert p.returncode == 1, p.stderr
        assert mpi_stderr(p.stderr) == one.stderr.replace(str(serial), str(par)), n
        names = same_files(serial, par)
        assert len(names) == WORLD + 1


@pytest.mark.parametrize("launcher", launchers())
def test_split_ranks_more_mpi_ranks_than_outputs(job, launcher, tmp_path):
    """Ranks without an output to write wait for the directory and say
    nothing; the directory made by rank 0 holds the serial files."""
    files, _, _ = job
    serial, par = tmp_path / "s", tmp_path / "new" / "p"
    (tmp_path / "new").mkdir()
    one = tool("convert", "--split-ranks", str(serial), *map(str, files[:2]))
    assert one.returncode == 0, one.stderr
    p = mpi(launcher, 4, "convert", "--split-ranks", str(par), *map(str, files[:2]))
    assert p.returncode == 0, p.stderr
    assert p.stderr == one.stderr.replace(str(serial), str(par))
    assert same_files(serial, par) == ["rank0.json", "rank1.json"]


def mpmd(launcher, dirs, *args):
    """One rank in each of dirs (its working directory), the same command
    line: where a rank writes a relative path shows what it wrote."""
    exe, opts = LAUNCHERS[launcher]
    cmd = [exe, *opts]
    for i, d in enumerate(dirs):
        cmd += [":"] * (i > 0) + ["-wdir", str(d), "-n", "1", str(TOOL), *args]
    return subprocess.run(cmd, env=mpi_env(), capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("launcher", launchers())
def test_split_ranks_rank_1_writes_the_second_half_itself(job, launcher, tmp_path):
    """Each rank writes its share (not rank 0 all): with the ranks in two
    working directories, a relative DIR gets ranks 0-7 under rank 0's and
    8-15 under rank 1's; where rank 1 finds no DIR (rank 0 made its own),
    its failures are said by rank 0, and counted."""
    files, _, _ = job
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "o").mkdir(parents=True)
    (b / "o").mkdir(parents=True)
    p = mpmd(launcher, [a, b], "convert", "--split-ranks", "o", *map(str, files))
    assert p.returncode == 0, p.stderr
    assert sorted(f.name for f in (a / "o").iterdir()) == sorted(f"rank{r}.json" for r in range(8))
    assert sorted(f.name for f in (b / "o").iterdir()) == sorted(
        f"rank{r}.json" for r in range(8, 16))
    p = mpmd(launcher, [a, b], "convert", "--split-ranks", "new", *map(str, files))
    assert p.returncode == 1
    err = mpi_stderr(p.stderr)
    assert err.count("No such file or directory") == 8, err
    assert err.endswith("cuptrace: 8 of 16 rank files could not be written into new\n"), err


@pytest.mark.parametrize("launcher", launchers())
@pytest.mark.parametrize("ext", ["json", "json.gz", "pftrace"])
def test_merged_output_from_the_ranks_pieces(damaged, launcher, ext, tmp_path):
    """convert -o OUT: each rank converts its files into a piece beside
    OUT, rank 0 puts them in file order between the head and the tail
    (which holds every file's status and drops): the serial file byte for
    byte (.json.gz: one gzip member of the ranks' deflate pieces), the
    serial lines, no piece left behind."""
    serial = tmp_path / f"s.{ext}"
    one = tool("convert", "-j", "1", "-o", str(serial), str(damaged))
    assert one.returncode == 1, one.stderr
    for n in (2, 3):
        out = tmp_path / f"p{n}" / f"t.{ext}"
        out.parent.mkdir()
        p = mpi(launcher, n, "convert", "-j", "1", "-o", str(out), str(damaged))
        assert p.returncode == 1, p.stderr
        assert mpi_stderr(p.stderr) == one.stderr.replace(str(serial), str(out)), n
        assert out.read_bytes() == serial.read_bytes(), n
        assert [f.name for f in out.parent.iterdir()] == [out.name]


@pytest.mark.parametrize("launcher", launchers())
def test_merged_output_a_piece_rank_0_cannot_reach(job, launcher, tmp_path):
    """Rank 1 writes its piece beside OUT in its own working directory,
    which rank 0 does not see: the output fails, nothing is left behind in
    either directory and an older OUT stays as it was."""
    files, _, _ = job
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "o").mkdir(parents=True)
    (b / "o").mkdir(parents=True)
    (a / "o" / "t.json").write_text("old")
    p = mpmd(launcher, [a, b], "convert", "-o", "o/t.json", *map(str, files))
    assert p.returncode == 1
    assert "rank 1's piece" in p.stderr and "writing o/t.json" in p.stderr, p.stderr
    assert [f.name for f in (a / "o").iterdir()] == ["t.json"]
    assert (a / "o" / "t.json").read_text() == "old"
    assert list((b / "o").iterdir()) == []


def test_sqlite_and_stdout_run_on_rank_0_alone(job, tmp_path):
    """export, convert -o OUT.sqlite and -o -: rank 0 alone, once."""
    files, _, _ = job
    if not LAUNCHERS["openmpi"][0]:
        pytest.skip("Open MPI's mpiexec not installed")
    serial, par = tmp_path / "s.sqlite", tmp_path / "p.sqlite"
    assert tool("export", "-o", str(serial), *map(str, files)).returncode == 0
    p = mpi("openmpi", 3, "export", "-o", str(par), *map(str, files))
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("wrote") == 1, p.stderr
    assert par.read_bytes() == serial.read_bytes()
    one = tool("convert", "-o", "-", *map(str, files[:2]))
    p = mpi("openmpi", 3, "convert", "-o", "-", *map(str, files[:2]))
    assert (p.returncode, p.stdout) == (0, one.stdout)


@pytest.mark.parametrize("launcher", launchers())
def test_a_piece_of_the_job_from_the_ranks(damaged, launcher, tmp_path):
    """--ranks slowest:N (chosen from the reports, read shared: rank 0's
    choice goes to every rank), --steps and --window: the serial piece,
    its events left out counted over every rank's files."""
    cases = [["convert", "--ranks", "slowest:2", "-o", "{}.json"],
             ["convert", "--steps", "2-4", "--split-ranks", "{}"],
             ["convert", "--window", "0.001-0.05", "-o", "{}.json.gz"],
             ["report", "--ranks", "slowest:2", "-o", "{}.html"]]
    for case in cases:
        serial = tmp_path / case[-1].format("s")
        one = tool(case[0], "-j", "1", *case[1:-1], str(serial), str(damaged))
        par = tmp_path / case[-1].format("p")
        p = mpi(launcher, 3, case[0], "-j", "1", *case[1:-1], str(par), str(damaged))
        assert p.returncode == one.returncode, p.stderr
        assert mpi_stderr(p.stderr) == one.stderr.replace(str(serial), str(par)), case
        assert "left out" in one.stderr or "kept" in one.stderr, one.stderr
        if serial.is_dir():
            same_files(serial, par)
        else:
            assert par.read_bytes() == serial.read_bytes(), case


@pytest.mark.parametrize("launcher", launchers())
def test_export_split_ranks_each_rank_writes_its_databases(damaged, job, launcher, tmp_path):
    """export --split-ranks: each MPI rank writes its share of the
    databases (the serial ones byte for byte, the serial lines); with the
    ranks in two working directories, rank 1's land in its own."""
    serial = tmp_path / "s"
    one = tool("export", "--split-ranks", str(serial), str(damaged))
    assert one.returncode == 1 and "damaged block" in one.stderr, one.stderr
    for n in (2, 4):
        par = tmp_path / f"p{n}"
        p = mpi(launcher, n, "export", "--split-ranks", str(par), str(damaged))
        assert p.returncode == 1, p.stderr
        assert mpi_stderr(p.stderr) == one.stderr.replace(str(serial), str(par)), n
        assert len(same_files(serial, par)) == WORLD
    files, _, _ = job
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "o").mkdir(parents=True)
    (b / "o").mkdir(parents=True)
    p = mpmd(launcher, [a, b], "export", "--split-ranks", "o", *map(str, files[:4]))
    assert p.returncode == 0, p.stderr
    ranks = sorted(int(re.search(r"(\d+)\.ctr$", f.name).group(1)) for f in files[:4])
    assert sorted(f.name for f in (b / "o").iterdir()) == sorted(
        f"rank{r}.sqlite" for r in ranks[2:])


@pytest.mark.parametrize("launcher", launchers())
def test_diff_and_report_base_print_the_serial_output_once(job, launcher, tmp_path):
    """diff reads both runs as stats does (each run's files shared out, rank
    0 compares); report --base reads the base the same way, on every rank."""
    files, two, _ = job
    base, new = tmp_path / "base", tmp_path / "new"
    base.mkdir(), new.mkdir()
    for f in files[:8]:
        (base / f.name).symlink_to(f)
    for f in two:
        (new / f.name).symlink_to(f)
    one = same_as_serial(launcher, ["diff", str(base), str(new)], ns=(2, 3))
    assert one.stdout.startswith("verdict: ") and "base 8 ranks, new 16" in one.stdout, one.stdout
    serial = tmp_path / "s.html"
    s = tool("report", "--base", str(base), "-o", str(serial), str(new))
    assert s.returncode == 0, s.stderr
    par = tmp_path / "p.html"
    p = mpi(launcher, 2, "report", "--base", str(base), "-o", str(par), str(new))
    assert p.returncode == 0, p.stderr
    assert par.read_bytes() == serial.read_bytes()


@pytest.mark.parametrize("launcher", launchers())
def test_diff_shares_each_runs_files_out(job, launcher, tmp_path):
    """diff reads each run's files shared out, as stats does (not rank 0
    alone): with the ranks in two working directories whose copies of the
    base's second file differ (a block of rank 0's corrupt), the output is what the
    serial command says in rank 1's directory, which holds the copy that
    rank 1 reads."""
    files, _, _ = job
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        (d / "base").mkdir(parents=True), (d / "new").mkdir()
        for f in files[:2]:
            (d / "base" / f.name).write_bytes(f.read_bytes())
        for f in files[2:4]:
            (d / "new" / f.name).symlink_to(f)
    bad = a / "base" / files[1].name
    data = bytearray(bad.read_bytes())
    data[3000:3100] = bytes(x ^ 0x5A for x in data[3000:3100])
    bad.write_bytes(bytes(data))
    in_a, in_b = (tool("diff", "base", "new", cwd=d) for d in (a, b))
    assert (in_a.returncode, in_b.returncode) == (1, 0), in_a.stderr + in_b.stderr
    assert in_a.stdout != in_b.stdout and "damaged block" in in_a.stderr, in_a.stderr
    p = mpmd(launcher, [a, b], "diff", "base", "new")
    assert (p.returncode, p.stdout, mpi_stderr(p.stderr)) == (0, in_b.stdout, in_b.stderr)


@pytest.fixture(scope="module")
def stepless(tmp_path_factory):
    """Two traces without steps: the CUPTI simulator's small run, twice."""
    d = tmp_path_factory.mktemp("stepless")
    for _ in range(2):
        p = subprocess.run([str(SIM_TRAIN), "small"], env=sim_env(d / "o", d),
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
    assert len(list((d / "o").glob("*.ctr"))) == 2
    return d / "o"


@pytest.mark.parametrize("launcher", launchers())
def test_a_run_without_the_steps_stops_every_rank(job, stepless, launcher, tmp_path):
    """diff and report --base with --steps where one run holds no steps:
    rank 0 finds it once it has every rank's parts and stops; the others
    stop with it (not read the next run and wait for rank 0 to take their
    parts). The serial lines and exit status, in either order of the runs;
    the same where report --base's base cannot be read."""
    files, _, _ = job
    new = tmp_path / "new"
    new.mkdir()
    for f in files:
        (new / f.name).symlink_to(f)
    page = str(tmp_path / "r.html")
    for args, why in ((["diff", "--steps", "1-2", str(stepless), str(new)], "holds no steps"),
                      (["diff", "--steps", "1-2", str(new), str(stepless)], "holds no steps"),
                      (["report", "--steps", "1-2", "--base", str(stepless), "-o", page,
                        str(new)], "holds no steps"),
                      (["report", "--base", str(tmp_path / "gone"), "-o", page, str(new)],
                       "No such file")):
        one = tool(*args)
        assert one.returncode == 1 and why in one.stderr, one.stderr
        p = mpi(launcher, 3, *args, timeout=30)
        assert (p.returncode, p.stdout, mpi_stderr(p.stderr)) == (1, one.stdout, one.stderr)
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("launcher", launchers())
def test_a_rank_that_runs_cuptrace_gets_the_serial_command(job, launcher):
    """A rank's program (MPI up) that runs cuptrace stats on its own file:
    the tool has the rank's variables but was not started by the launcher,
    so it must not start MPI as that rank a second time (Open MPI aborts the
    job); it runs the serial command. Started by the launcher through a
    shell, it is a rank of the tool's job."""
    files, _, _ = job
    prog = PROGS / ("mpich/mpi_system" if launcher == "mpich" else "mpi_system")
    if not prog.exists():
        pytest.skip(f"{prog.name} not built for {launcher}")
    one = tool("stats", "-r", "nvtx_sum", str(files[0]))
    exe, opts = LAUNCHERS[launcher]
    cmd = f"{TOOL} stats -r nvtx_sum {files[0]} > out.$$; cmp -s out.$$ {{}} && echo same; rm out.$$"
    ref = files[0].parent / "serial.txt"
    ref.write_text(one.stdout)
    p = subprocess.run([exe, *opts, "-n", "2", str(prog), cmd.format(ref)], env=mpi_env(),
                       capture_output=True, text=True, timeout=120, cwd=files[0].parent)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("same") == 2 and p.stdout.count("status 0") == 2, p.stdout + p.stderr
    q = subprocess.run([exe, *opts, "-n", "2", "sh", "-c",
                        f"{TOOL} stats -v -r nvtx_sum {' '.join(map(str, files))}"],
                       env=mpi_env(), capture_output=True, text=True, timeout=120)
    assert q.returncode == 0, q.stderr
    assert q.stderr.count("2 MPI ranks: each reads its share") == 1, q.stderr
