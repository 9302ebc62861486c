"""What the package was built for. In the source tree: no library path (SAGERUN_LIBRARY, then the
loader's libsagerun.so.0) and the version of include/sagerun/sagerun.h; the build (python/_build.py)
writes the installed copy with the library it was built against."""
LIBRARY = None
VERSION = (0, 1)
