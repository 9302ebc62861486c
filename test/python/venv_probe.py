# A Python variant that imports a module only a virtual environment has (test/cli/test_python.sh
# makes the venv): it loads when sagerun's interpreter is that venv's, and create checks that the
# interpreter sees the venv as sys.prefix and its python as sys.executable.
# sagerun-variant: py-venv run=run create=create backend=host
import os
import sys

import sagerun_venv_probe  # in the venv's site-packages only


def create(call):
    venv = os.environ["SAGERUN_TEST_VENV"]
    if sys.prefix != venv or sys.executable != os.path.join(venv, "bin", "python3"):
        raise ValueError("prefix %s, executable %s, expected the venv %s"
                         % (sys.prefix, sys.executable, venv))
    return sagerun_venv_probe.TOKEN


def run(call):
    call.o[...] = call.q
