# SPDX-License-Identifier: MIT
"""The container recipe of docs/container/, as far as a machine without a
container runtime or a cluster can check it. The Containerfile builds
cuptrace with one script, build.sh: here the same script, with the
arguments of the Containerfile's RUN line, builds a copy of the sources its
COPY lines name into a temporary prefix, and what it installed runs (the
version, the library `cuptrace run` preloads, a traced program). The MPIJob
example parses, and its command line holds together with the image: the
paths the Containerfile installs, the ranks its workers give, options that
this cuptrace takes."""
import os
import re
import shlex
import shutil

import pytest

from conftest import PROGS, ROOT, SAN, TOOL, base_env, ctr_files, launcher_env, run

DIR = ROOT / "docs" / "container"
CONTAINERFILE = DIR / "Containerfile"
MANIFEST = DIR / "mpijob.yaml"
SRC = "/src/cuptrace"  # where the Containerfile puts the sources


def instructions():
    """The Containerfile's instructions, (KEYWORD, text), continued lines
    joined, comments left out."""
    out, cur = [], ""
    for line in CONTAINERFILE.read_text().splitlines():
        if line.lstrip().startswith("#") or (not cur and not line.strip()):
            continue
        cur += line.strip()
        if cur.endswith("\\"):
            cur = cur[:-1].rstrip() + " "
            continue
        kw, _, rest = cur.partition(" ")
        out.append((kw.upper(), rest.strip()))
        cur = ""
    assert not cur, "a continued line at the end"
    return out


def args_of(ins):
    """ARG defaults."""
    out = {}
    for kw, text in ins:
        if kw == "ARG" and "=" in text:
            k, v = text.split("=", 1)
            out[k] = shlex.split(v)[0] if v else ""
    return out


def build_step(ins):
    """The RUN line's call of build.sh: (script, src, prefix) in the image."""
    runs = [t for kw, t in ins if kw == "RUN" and "build.sh" in t]
    assert len(runs) == 1, runs
    words = shlex.split(runs[0].split("&&")[0])
    assert words[0] == "sh" and words[1].endswith("/docs/container/build.sh"), words
    script, src, prefix = words[1:]
    return script, src, prefix


def ct_version():
    return re.search(r"^CT_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.M).group(1)


def exports(lib):
    p = run(["nm", "-D", "--defined-only", lib], check=True)
    return {line.split()[-1] for line in p.stdout.splitlines() if line.strip()}


def test_the_image_is_nvidias_cuda_devel_image():
    ins = instructions()
    [base] = [t for kw, t in ins if kw == "FROM"]
    image = re.sub(r"\$\{(\w+)\}", lambda m: args_of(ins)[m.group(1)], base)
    assert re.fullmatch(r"nvcr\.io/nvidia/cuda:13\.0\.\d+-devel-ubuntu24\.04", image), image


@pytest.mark.skipif(bool(SAN), reason="the recipe builds the release variant: make test's")
def test_the_recipe_builds_and_installs_with_its_script(tmp_path):
    ins = instructions()
    src = tmp_path / "src"
    # the sources as the COPY lines lay them out
    for kw, text in ins:
        if kw != "COPY":
            continue
        *froms, dest = shlex.split(text)
        assert dest.startswith(SRC), dest
        local = src / dest[len(SRC):].lstrip("/")
        for f in froms:
            there = local / f if dest.endswith("/") else local
            there.parent.mkdir(parents=True, exist_ok=True)
            if (ROOT / f).is_dir():
                shutil.copytree(ROOT / f, there, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(ROOT / f, there)
    assert not (src / "build").exists()
    script, where, prefix = build_step(ins)
    assert where == SRC
    # make's settings of a make that runs this suite must not reach it
    env = {k: v for k, v in base_env().items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "SAN", "DEBUG",
                        "EXTRA_CFLAGS", "V")}
    env["JOBS"] = "2"
    inst = tmp_path / "prefix"
    p = run(["sh", src / script[len(SRC):].lstrip("/"), src, inst], env=env, timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert f"cuptrace {ct_version()}\n" in p.stdout and f"installed under {inst}" in p.stdout

    prog, lib = inst / "bin" / "cuptrace", inst / "lib" / "libcuptrace.so"
    assert os.access(prog, os.X_OK) and lib.is_file()
    for h in ("cuptrace.h", "format.h"):
        assert (inst / "include" / "cuptrace" / h).read_bytes() == \
            (ROOT / "include" / "cuptrace" / h).read_bytes()
    assert run([prog, "--version"]).stdout == f"cuptrace {ct_version()}\n"
    # the library exports what the tree's build exports: the control API and
    # the injection entry points
    got = exports(lib)
    assert {"cuptrace_step", "cuptrace_flush", "InitializeInjection",
            "InitializeInjectionNvtx2"} <= got
    assert got == exports(ROOT / "build" / "lib" / "libcuptrace.so")
    # `cuptrace run` preloads the installed library, not the tree's
    p = run([prog, "run", "-o", tmp_path / "none" / "%p.ctr", "--", "grep", "-h", "libcuptrace",
             "/proc/self/maps"], env=base_env())
    assert p.returncode == 0 and str(lib) in p.stdout, p.stdout + p.stderr
    assert str(ROOT / "build") not in p.stdout
    # and traces a program, which the installed tool reads
    out = tmp_path / "traces"
    p = run([prog, "run", "-o", out / "%p.ctr", "--", PROGS / "demo_train", "2"], env=base_env())
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(out)
    p = run([prog, "info", f])
    assert p.returncode == 0 and re.search(r"^status:\s+clean", p.stdout, re.M), p.stdout


def test_the_mpijob_example_holds_together_with_the_image(tmp_path):
    yaml = pytest.importorskip("yaml")
    doc = yaml.safe_load(MANIFEST.read_text())
    assert doc["apiVersion"] == "kubeflow.org/v2beta1" and doc["kind"] == "MPIJob"
    spec = doc["spec"]
    replicas = spec["mpiReplicaSpecs"]
    assert set(replicas) == {"Launcher", "Worker"}
    assert replicas["Launcher"]["replicas"] == 1
    workers, slots = replicas["Worker"]["replicas"], spec["slotsPerWorker"]
    assert (workers, slots) == (2, 1)
    pods = {k: r["template"]["spec"] for k, r in replicas.items()}
    [launcher] = pods["Launcher"]["containers"]
    [worker] = pods["Worker"]["containers"]
    assert launcher["image"] == worker["image"]

    # the command line: mpirun, one rank per worker slot, each rank traced
    cmd = launcher["command"] + launcher.get("args", [])
    assert all(isinstance(w, str) for w in cmd), cmd  # Kubernetes takes strings only
    assert cmd[0] == "mpirun" and int(cmd[cmd.index("-n") + 1]) == workers * slots
    _, _, prefix = build_step(instructions())
    at = cmd.index(f"{prefix}/bin/cuptrace")
    assert cmd[at + 1] == "run"
    opts, prog = cmd[at + 2:cmd.index("--")], cmd[cmd.index("--") + 1:]
    assert prog[0] == "/usr/local/bin/all_reduce_perf"
    assert "/usr/local/bin/" in CONTAINERFILE.read_text() and "_perf" in CONTAINERFILE.read_text()
    # the ranks write where every pod mounts the same claim
    out = opts[opts.index("-o") + 1]
    mounts = {}
    for k, pod in pods.items():
        claims = {v["name"]: v["persistentVolumeClaim"]["claimName"]
                  for v in pod["volumes"] if "persistentVolumeClaim" in v}
        [c] = pod["containers"]
        mounts[k] = {m["mountPath"]: claims[m["name"]] for m in c["volumeMounts"]
                     if m["name"] in claims}
    assert mounts["Launcher"] == mounts["Worker"] and len(mounts["Worker"]) == 1
    [(path, _)] = mounts["Worker"].items()
    assert out.startswith(path.rstrip("/") + "/") and "%r" in out
    # this cuptrace takes those options (--stats: reports it has)
    local = [tmp_path / "t" / "r%r.ctr" if w == out else w for w in opts]
    p = run([TOOL, "run", *local, "--", "true"], env=launcher_env())
    assert p.returncode == 0, p.stderr

    # workers: a GPU per slot, mpi-operator's sshd as the image's user
    assert worker["resources"]["limits"]["nvidia.com/gpu"] == slots
    assert worker["command"] == ["/usr/sbin/sshd"]
    config = worker["args"][worker["args"].index("-f") + 1]
    recipe = CONTAINERFILE.read_text()
    assert config in recipe and spec["sshAuthMountPath"] == "/home/mpiuser/.ssh"
    uid = int(re.search(r"useradd -m -u (\d+) mpiuser", recipe).group(1))
    assert all(p["securityContext"]["runAsUser"] == uid for p in pods.values())
