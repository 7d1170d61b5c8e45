"""CTest's way into the Python package's tests (tests/CMakeLists.txt): `run_pytest.py cpu|gpu`.

Runs pytest on the suite, with the package the build made on PYTHONPATH. Where the suite
cannot run here it prints a line beginning with SKIPPED and the reason, which CTest reports
as a skipped test (never as a pass): pytest or NumPy missing; for the GPU suite, no PyTorch
and no CuPy, or no CUDA device (or a build without the CUDA backend).
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
SUITES = {"cpu": ["test_cpu.py", "test_api.py", "test_imports.py"], "gpu": ["test_gpu.py"]}


def skip(reason: str) -> int:
    print(f"SKIPPED: {reason}")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in SUITES:
        print(f"usage: {sys.argv[0]} {'|'.join(SUITES)}", file=sys.stderr)
        return 2
    suite = argv[0]
    missing = [name for name in ("pytest", "numpy") if importlib.util.find_spec(name) is None]
    if missing:
        return skip(f"{' and '.join(missing)} not installed for {sys.executable} (scripts/install-deps.sh "
                    f"installs them)")
    if suite == "gpu":
        # The frameworks before gemmlab, as test_gpu.py imports them: the extension then binds
        # to the CUDA libraries they loaded (their wheels' cudart and cuBLAS) rather than bringing
        # the toolkit's copies in first. The other order is tried in the CPU suite, in a process
        # of its own (test_imports.py), where a crash fails one test instead of this suite.
        for name in ("torch", "cupy"):
            if importlib.util.find_spec(name) is not None:
                importlib.import_module(name)
    import gemmlab  # the build's, through PYTHONPATH: an import error here is a failure

    if suite == "gpu":
        if not any(importlib.util.find_spec(name) for name in ("torch", "cupy")):
            return skip(f"the GPU suite needs PyTorch or CuPy, and {sys.executable} has neither")
        if not gemmlab.build_info()["cuda_built"]:
            return skip("this build has no CUDA backend")
        if not gemmlab.cuda_available():
            return skip("no CUDA device is visible")
    import pytest

    files = [str(HERE / name) for name in SUITES[suite]]
    # -q and no -r: pytest's own word for a skipped test stays out of the output, so that
    # CTest's skip pattern matches only the lines above.
    return int(pytest.main(["-q", "-p", "no:cacheprovider", f"--rootdir={HERE}", *files]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
