"""Code run in a fresh interpreter, with the gemmlab these tests import: a process that dies
(an abort while a package loads after gemmlab, as pyarrow and PyTorch once did) fails the one
test that ran it, with its signal and output, instead of ending the whole suite."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import textwrap

import gemmlab

HERE = pathlib.Path(__file__).resolve().parent
# The folder holding the package these tests import (the build's, or an installed one).
PACKAGE_PARENT = pathlib.Path(gemmlab.__file__).resolve().parent.parent


def run_python(code: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """Runs `code` (dedented) in `python -X faulthandler -c`, with this gemmlab first on its path."""
    env = dict(os.environ)
    path = [str(PACKAGE_PARENT), str(HERE)]
    if env.get("PYTHONPATH"):
        path.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(path)
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    return subprocess.run([sys.executable, "-X", "faulthandler", "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=timeout)


def _tail(text: str, lines: int = 60) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:]) or "(nothing)"


def assert_ran(result: subprocess.CompletedProcess, what: str) -> str:
    """Fails, naming how the process ended and what it printed, unless it exited with 0;
    returns its standard output."""
    if result.returncode != 0:
        if result.returncode < 0:
            try:
                how = f"signal {signal.Signals(-result.returncode).name}"
            except ValueError:
                how = f"signal {-result.returncode}"
        else:
            how = f"exit status {result.returncode}"
        raise AssertionError(f"{what}: the process ended with {how}\n--- stdout ---\n{_tail(result.stdout)}\n"
                             f"--- stderr ---\n{_tail(result.stderr)}")
    return result.stdout
