"""gemmlab in a process with other native packages: the extension exports its entry point
alone, importing it and running its own rungs leave the process as they found it (no OpenBLAS,
no threads, the environment unchanged), and the packages a gemmlab user also imports (NumPy,
SciPy, pandas, pyarrow, PyTorch, CuPy) load and run after gemmlab has. Each of those runs in a
fresh interpreter (isolated.py), so a crash fails its test with its output."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import textwrap

import pytest

import gemmlab
from isolated import assert_ran, run_python

LINUX = sys.platform.startswith("linux")


@pytest.mark.skipif(not LINUX or shutil.which("nm") is None, reason="reads the ELF symbol table with nm")
def test_extension_exports_only_its_entry_point():
    # Anything else exported (the library's, fmt's, nlohmann_json's or libstdc++'s symbols, and
    # above all libstdc++'s GNU_UNIQUE statics, bound process-wide whatever RTLD_LOCAL says) is
    # something another extension of the process could be bound to.
    listing = subprocess.run(["nm", "-D", "--defined-only", gemmlab._core.__file__], capture_output=True,
                             text=True, check=True).stdout
    exported = sorted({line.split()[-1] for line in listing.splitlines() if line.strip()})
    assert exported == ["PyInit__core"], f"{len(exported)} symbols exported, e.g. {exported[:10]}"


@pytest.mark.skipif(not LINUX, reason="reads /proc/self")
def test_gemmlab_leaves_the_process_as_it_found_it():
    # NumPy is not imported here: every OpenBLAS in the process is gemmlab's.
    out = assert_ran(run_python("""
        import ctypes
        import os

        getenv = ctypes.CDLL(None).getenv  # the C library's environment (os.environ is a copy of it)
        getenv.restype = ctypes.c_char_p

        def coretype():
            return getenv(b"OPENBLAS_CORETYPE")

        def openblas():
            with open("/proc/self/maps") as maps:
                return sorted({line.split()[-1] for line in maps if "openblas" in line.split()[-1].lower()})

        def threads():
            return len(os.listdir("/proc/self/task"))

        os.environ.pop("OPENBLAS_CORETYPE", None)  # so that gemmlab chooses one for OpenBLAS
        before = threads()
        import gemmlab
        assert threads() == before, f"import gemmlab started {threads() - before} threads"
        assert openblas() == [], f"import gemmlab loaded {openblas()}"
        gemmlab.variants()  # asks the GPU, where there is one: the CUDA driver starts threads of its own
        before = threads()
        gemmlab.verify("naive,packed_simd", backend="cpu", shapes=[40])
        assert openblas() == [], f"verify of gemmlab's own rungs loaded {openblas()}"
        assert threads() == before, f"verify left {threads() - before} threads running"
        assert coretype() is None, f"gemmlab set OPENBLAS_CORETYPE={coretype()}"
        results = gemmlab.verify("openblas_sgemm_1t", backend="cpu", shapes=[40])
        if results[0]["status"] == "ok":  # OpenBLAS is installed: asked for, it loads
            assert openblas(), "the OpenBLAS anchor ran without OpenBLAS"
        assert coretype() is None, f"loading OpenBLAS left OPENBLAS_CORETYPE={coretype()} in the environment"
        print("clean")
    """), "gemmlab beside nothing else")
    assert out.split()[-1] == "clean"


# Run first in each fresh process: gemmlab's rungs on the CPU (its threaded team on this thread
# and on another, a context destroyed with its thread), the harness with the OpenBLAS anchors,
# the registries and, where there is a GPU, the device queries.
GEMMLAB_FIRST = """
    import threading
    import numpy as np
    import gemmlab

    a = np.random.default_rng(7).uniform(-1, 1, (300, 200)).astype(np.float32)
    gemmlab.matmul(a, a.T)
    worker = threading.Thread(target=lambda: gemmlab.matmul(a, a.T))
    worker.start()
    worker.join()
    gemmlab.variants()
    gemmlab.verify("naive", backend="cpu", shapes=[16])
    gemmlab.bench(["naive", "openblas_sgemm_1t", "openblas_sgemm"], backend="cpu", shapes=[64], reps=1,
                  warmup=0, min_time=0)
    if gemmlab.cuda_available():
        gemmlab.devices()
"""

# What each package does once imported: enough to run its native code.
AFTERWARDS = {
    "numpy": "import numpy as np\nassert float((np.ones((64, 64)) @ np.ones((64, 64)))[0, 0]) == 64.0",
    "scipy": "import scipy.linalg, numpy as np\nscipy.linalg.blas.sgemm(1.0, np.ones((64, 64), np.float32), "
             "np.ones((64, 64), np.float32))",
    "pandas": "import pandas\nassert pandas.DataFrame({'x': [1, 2]})['x'].sum() == 3",
    "pyarrow": "import pyarrow\nassert pyarrow.array([1, 2, 3]).to_pylist() == [1, 2, 3]",
    "torch": "import torch\nassert float(torch.ones(64, 64).matmul(torch.ones(64, 64))[0, 0]) == 64.0\n"
             "torch.cuda.is_available()",
    "cupy": "import cupy",
}


@pytest.mark.parametrize("package", list(AFTERWARDS))
def test_a_package_imported_after_gemmlab(package):
    if importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} is not installed for {sys.executable}")
    if package == "numpy":
        # gemmlab's OpenBLAS loaded before NumPy's: the harness alone, which needs no NumPy.
        first = ('import gemmlab\n'
                 'gemmlab.bench(["openblas_sgemm", "naive"], backend="cpu", shapes=[64], reps=1, warmup=0, '
                 'min_time=0)')
    else:
        first = GEMMLAB_FIRST
    code = textwrap.dedent(first) + "\n" + AFTERWARDS[package] + "\nprint('imported')\n"
    assert_ran(run_python(code),
               f"import {package} after gemmlab")
