# A Python variant that declares the extension module it loads (here any file named by the
# environment): sagerun hashes it into list and the reports, and hands its path to the variant.
# sagerun-variant: py-ext run=run backend=host extension=${SAGERUN_TEST_EXTENSION}
import os


def run(call):
    if call.extension != os.environ["SAGERUN_TEST_EXTENSION"]:
        raise ValueError("call.extension is %r" % call.extension)
    call.o[...] = call.q
