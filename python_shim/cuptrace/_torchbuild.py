# SPDX-License-Identifier: MIT
"""cuptrace's C++ modules for torch, for the torch this process imports:
_torchops (the operator observer of the torch source) and _torchhooks (the
backward ranges' hooks on autograd's nodes). torch's C++ classes have no
stable ABI: a module built for one torch must not load under another.

load(name) finds one by the first route that works:
  prebuilt  beside this file, built with the package for this very torch
            (pip install --no-build-isolation, make pyext): its NAME.version
            file holds the torch version and C++ ABI it was built for;
  cached    built earlier for this torch from these sources, in
            $CUPTRACE_TORCH_CACHE (default $XDG_CACHE_HOME/cuptrace or
            ~/.cache/cuptrace), under torch-VERSION-ABI/;
  built     now, into that cache, with the system's C++ compiler ($CXX or
            c++) and torch's headers; a lock on the folder makes processes
            that import torch at once (the ranks of a job) wait for one
            build;
  none      no compiler, no torch C++ headers, or the build failed.
The last two say so on stderr, once per process and module, with how to get
the first; the first two say nothing.

As a script, for the package's builds (setup.py, python.mk):
  python _torchbuild.py --prebuild DIR [--cflags FLAGS]
builds both modules into DIR for the torch this Python imports, with their
version files; exits 1 (and says why) where that torch has no C++ headers
or there is none, 2 where a compile fails. `--check` only exits 0 or 1.
Nothing here imports torch until asked to, nor the rest of the package.
"""
import hashlib
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"

# Each module: its sources and headers (in this folder), whether it links
# libtorch_python (tensors from Python objects), and what goes without it.
MODULES = {
    "_torchops": {
        "sources": ["_torchops.cpp", "_torchops_text.cpp", "_torchops_mem.cpp",
                    "_torchops_frames.c"],
        "headers": ["_torchops.h"],
        # Flags to compile a source again with where it fails: the frames
        # without the interpreter's internal headers.
        "retry": {"_torchops_frames.c": ["-DCT_NO_FRAME_CHAIN"]},
        "python": False,
        "without": "torch operators are not recorded",
    },
    "_torchhooks": {
        "sources": ["_torchhooks.cpp"],
        "headers": ["_torchhooks.h"],
        "python": True,
        "without": "backward ranges use tensor hooks instead (about 1.5 us more a module call)",
    },
}
FAST_ROUTE = ("`pip install --no-build-isolation ./python_shim` in this environment builds it "
              "with the package")


class BuildError(Exception):
    """Why a module could not be built (one line); .log: the compiler's words."""

    def __init__(self, why, log=""):
        super().__init__(why)
        self.log = log


def torch_tag():
    """'VERSION ABI' of the torch this process imports (cxx11 or pre-cxx11:
    torch's two C++ ABIs of one version)."""
    import torch
    abi = "cxx11" if torch.compiled_with_cxx11_abi() else "pre-cxx11"
    return f"{torch.__version__} {abi}"


def flags():
    """{'include_dirs', 'library_dirs', 'libraries', 'macros'} of the torch
    this Python imports, or BuildError when there is none or it has no C++
    headers (pip's torch has them; Debian's needs libtorch-dev)."""
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any failure to import: no torch to build for
        raise BuildError(f"torch does not import ({type(e).__name__}: {e})") from None
    root = os.path.dirname(os.path.abspath(torch.__file__))
    inc = os.path.join(root, "include")
    if not os.path.exists(os.path.join(inc, "ATen", "record_function.h")):
        raise BuildError(f"torch {torch.__version__} has no C++ headers in {inc} (Debian: "
                         "apt install libtorch-dev)")
    lib = os.path.join(root, "lib")
    return {
        "include_dirs": [inc, os.path.join(inc, "torch", "csrc", "api", "include")],
        "library_dirs": [lib],
        "libraries": ["torch", "torch_cpu", "c10"],
        "macros": [("CT_TORCH_VERSION", '"%s"' % torch.__version__),
                   ("CT_TORCH_VERSION_NUM", str(version_num(torch.__version__))),
                   ("_GLIBCXX_USE_CXX11_ABI", "1" if torch.compiled_with_cxx11_abi() else "0")],
    }


def version_num(version):
    """'2.5.1+cu121' -> 20501: what the sources test with #if."""
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    return int(m[1]) * 10000 + int(m[2]) * 100 + int(m[3] or 0) if m else 0


def abi_include():
    """The folder that holds cuptrace/torch_abi.h: the package's copy
    (installed) or the checkout's include/ (source tree)."""
    for d in (os.path.join(HERE, "include"), os.path.join(HERE, "..", "..", "include")):
        if os.path.exists(os.path.join(d, "cuptrace", "torch_abi.h")):
            return os.path.abspath(d)
    raise BuildError(f"cuptrace/torch_abi.h is missing beside {HERE}")


def commands(name, out, f, cflags=()):
    """([compile command per source], link command) building module name
    into out, objects beside it."""
    spec = MODULES[name]
    cxx = shlex.split(os.environ.get("CXX") or "c++")
    cc = shlex.split(os.environ.get("CC") or "cc")
    # C++20: what torch 2.x's headers need (1.13's take it too). NDEBUG as
    # torch is built: some of its classes have debug-only members.
    common = ["-fPIC", "-O2", "-DNDEBUG", "-fvisibility=hidden", "-I" + abi_include(),
              "-isystem", sysconfig.get_paths()["include"]]
    common += [a for d in f["include_dirs"] for a in ("-isystem", d)]
    common += ["-D%s=%s" % m for m in f["macros"]] + list(cflags)
    objs, compiles = [], []
    for src in spec["sources"]:
        obj = f"{out}.{src}.o"
        objs.append(obj)
        lang = cc + ["-std=gnu11"] if src.endswith(".c") else cxx + ["-std=c++20"]
        compiles.append(lang + common + ["-c", os.path.join(HERE, src), "-o", obj])
    libs = f["libraries"] + (["torch_python"] if spec["python"] else [])
    link = cxx + ["-shared"] + list(cflags) + objs + ["-o", out]
    link += ["-L" + d for d in f["library_dirs"]] + ["-Wl,-rpath," + d for d in f["library_dirs"]]
    link += ["-l" + lib for lib in libs]
    return compiles, link


def compilers(name):
    """BuildError unless the compilers module name needs are there."""
    kinds = {("CC", "cc") if s.endswith(".c") else ("CXX", "c++") for s in MODULES[name]["sources"]}
    for var, default in sorted(kinds):
        exe = shlex.split(os.environ.get(var) or default)[0]
        if not shutil.which(exe):
            raise BuildError(f"no {'C' if var == 'CC' else 'C++'} compiler: {exe} not found "
                             f"(set {var}, or install g++)")


def compile_module(name, out, cflags=()):
    """Builds module name into the file out (made whole, or not at all);
    BuildError when it cannot."""
    f = flags()
    compilers(name)
    tmp = tempfile.mkdtemp(prefix=".build-", dir=os.path.dirname(os.path.abspath(out)))
    part = os.path.join(tmp, os.path.basename(out))
    compiles, link = commands(name, part, f, cflags)
    try:
        jobs = max(1, min(len(compiles), os.cpu_count() or 1))
        logs = []
        for i in range(0, len(compiles), jobs):
            procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True) for c in compiles[i:i + jobs]]
            for c, p in zip(compiles[i:i + jobs], procs):
                text = p.communicate()[0]
                logs.append(" ".join(c) + "\n" + text)
                retry = MODULES[name].get("retry", {}).get(os.path.basename(c[-3]))
                if p.returncode and retry:
                    c = c[:-4] + retry + c[-4:]
                    p = subprocess.run(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       text=True)
                    text = p.stdout
                    logs.append(" ".join(c) + "\n" + text)
                if p.returncode:
                    raise BuildError(f"{c[0]} failed on {os.path.basename(c[-3])}: "
                                     f"{first_error(text)}", "\n".join(logs))
        p = subprocess.run(link, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        logs.append(" ".join(link) + "\n" + p.stdout)
        if p.returncode:
            raise BuildError(f"linking failed: {first_error(p.stdout)}", "\n".join(logs))
        os.replace(part, out)
    finally:
        for n in os.listdir(tmp):
            os.remove(os.path.join(tmp, n))
        os.rmdir(tmp)


def first_error(text):
    for line in text.splitlines():
        if "error" in line:
            return line.strip()[:300]
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[-1].strip()[:300] if lines else "(no output)"


def source_key(name, cflags=()):
    """A hash of what goes into the module: its sources, headers, the
    library's interface and the flags."""
    spec = MODULES[name]
    h = hashlib.sha256(repr(list(cflags)).encode())
    paths = [os.path.join(HERE, n) for n in spec["sources"] + spec["headers"]]
    for p in paths + [os.path.join(abi_include(), "cuptrace", "torch_abi.h"), __file__]:
        with open(p, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()[:16]


def cache_dir(tag):
    root = os.environ.get("CUPTRACE_TORCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "cuptrace")
    return os.path.join(root, "torch-" + tag.replace(" ", "-").replace(os.sep, "_"))


_said = set()


def say(key, text):
    if key in _said:
        return
    _said.add(key)
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - no stderr (a daemon): nothing to say it on
        pass


def import_from(name, path):
    """The module at path as cuptrace.NAME."""
    full = "cuptrace." + name
    spec = importlib.util.spec_from_file_location(full, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules[full] = mod
    return mod


def prebuilt_tag(name, where=HERE):
    try:
        with open(os.path.join(where, name + ".version")) as fh:
            return fh.read().strip()
    except OSError:
        return None


class _Lock:
    """An exclusive lock on folder d's .lock file, said when waited for."""

    def __init__(self, d, name):
        self.path, self.name, self.fd = os.path.join(d, ".lock"), name, -1

    def __enter__(self):
        import fcntl
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(("wait", self.name), f"cuptrace: waiting for another process building "
                f"cuptrace.{self.name} in {os.path.dirname(self.path)}")
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        os.close(self.fd)  # releases the lock
        return False


_loaded = {}


def load(name):
    """Module cuptrace.NAME for the torch this process imports (torch must
    be imported), or None (said on stderr) where it cannot be had. Never
    raises."""
    if name in _loaded:
        return _loaded[name]
    mod = None
    try:
        mod = _find(name)
    except Exception as e:  # noqa: BLE001 - the traced program goes on without it
        say(("fail", name), f"cuptrace: warning: {MODULES[name]['without']}: cuptrace.{name} "
            f"did not load ({type(e).__name__}: {e})")
    _loaded[name] = mod
    return mod


def _find(name):
    tag = torch_tag()
    version = tag.split()[0]
    pre = os.path.join(HERE, name + SUFFIX)
    built_for = prebuilt_tag(name)
    if built_for == tag and os.path.exists(pre):
        return import_from(name, pre)
    d = cache_dir(tag)
    try:
        path = os.path.join(d, f"{name}.{source_key(name)}{SUFFIX}")
    except (BuildError, OSError) as e:
        say(("fail", name), f"cuptrace: warning: {MODULES[name]['without']}: cannot build "
            f"cuptrace.{name}: {e}")
        return None
    if not os.path.exists(path):
        try:
            flags(), compilers(name)  # what is missing, said before any build is
            os.makedirs(d, exist_ok=True)
            failed = path + ".failed"  # a compile that failed is not tried again by each rank
            with _Lock(d, name):
                if os.path.exists(failed):
                    with open(failed) as fh:
                        raise BuildError(fh.read().strip() + f" (delete {failed} to try again)")
                if not os.path.exists(path):
                    why = (f"the package's is for torch {built_for}" if built_for and
                           os.path.exists(pre) else "the package was built without it")
                    say(("build", name), f"cuptrace: building cuptrace.{name} for torch {version} "
                        f"into {d} ({why}; once per torch version, a minute at most); "
                        f"{FAST_ROUTE}")
                    try:
                        compile_module(name, path)
                    except BuildError as e:
                        log = os.path.join(d, name + ".log")
                        with open(log, "w") as fh:
                            fh.write(e.log)
                        with open(failed, "w") as fh:
                            fh.write(f"{e} (the compiler's output: {log})\n")
                        raise BuildError(f"{e} (the compiler's output: {log})") from None
        except BuildError as e:
            say(("fail", name), f"cuptrace: warning: {MODULES[name]['without']}: cannot build "
                f"cuptrace.{name} for torch {version}: {e}")
            return None
        except OSError as e:
            say(("fail", name), f"cuptrace: warning: {MODULES[name]['without']}: cannot build "
                f"cuptrace.{name} into {d} ({e}); set CUPTRACE_TORCH_CACHE to a folder "
                "it can write")
            return None
    return import_from(name, path)


def prebuild(where, cflags=()):
    """Both modules into folder where, with their version files; returns
    the exit status of the script (0, 1: no torch to build for, 2: a
    compile failed)."""
    for name in MODULES:
        for stale in (os.path.join(where, name + SUFFIX), os.path.join(where, name + ".version")):
            if os.path.exists(stale):
                os.remove(stale)
    try:
        flags()
        tag = torch_tag()
    except BuildError as e:
        sys.stderr.write(f"cuptrace: no torch modules prebuilt: {e}; they are built at first "
                         "use, into the cache\n")
        return 1
    for name in MODULES:
        try:
            compile_module(name, os.path.join(where, name + SUFFIX), cflags)
        except BuildError as e:
            sys.stderr.write(f"cuptrace: cuptrace.{name} not built: {e}\n{e.log}\n")
            return 2
        with open(os.path.join(where, name + ".version"), "w") as fh:
            fh.write(tag + "\n")
    return 0


def main(argv):
    if argv[:1] == ["--check"]:
        try:
            flags()
            return 0
        except BuildError as e:
            sys.stderr.write(f"{e}\n")
            return 1
    if argv[:1] == ["--prebuild"] and len(argv) in (2, 4) and argv[2:3] in ([], ["--cflags"]):
        return prebuild(argv[1], shlex.split(argv[3]) if len(argv) == 4 else ())
    sys.stderr.write("usage: _torchbuild.py --check | --prebuild DIR [--cflags FLAGS]\n")
    return 64


if __name__ == "__main__":
    # Run as a file, its folder comes first on the path, where `import
    # torch` would find the package's torch.py.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]
    sys.exit(main(sys.argv[1:]))
