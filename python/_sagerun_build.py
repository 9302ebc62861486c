"""A PEP 517 backend in the standard library only: `pip install ./python` builds the wheel offline
(no setuptools to fetch). It writes sagerun/_build_info.py with the library the package was built
against: $SAGERUN_BUILD_LIBRARY (make install sets it), else the source tree's build/lib, else none
(then SAGERUN_LIBRARY or the loader finds it), and the version of include/sagerun/sagerun.h."""

import base64
import hashlib
import os
import re
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NAME = "sagerun"
SUMMARY = "A/B tests of attention kernels (libsagerun) from Python"


def _version():
    header = os.path.join(ROOT, "include", "sagerun", "sagerun.h")
    text = open(header).read() if os.path.exists(header) else ""
    found = [re.search(r"#define SAGERUN_VERSION_%s (\d+)" % k, text)
             for k in ("MAJOR", "MINOR", "PATCH")]
    if not all(found):
        info = {}
        exec(open(os.path.join(HERE, NAME, "_build_info.py")).read(), info)
        return tuple(info["VERSION"]) + (0,)
    return tuple(int(m.group(1)) for m in found)


def _library():
    lib = os.environ.get("SAGERUN_BUILD_LIBRARY")
    if lib:
        return lib
    built = os.path.join(ROOT, "build", "lib", "libsagerun.so.0")
    return built if os.path.exists(built) else None


def _build_info(version):
    return ('"""Written by python/_sagerun_build.py: the library this package was built for."""\n'
            "LIBRARY = %r\nVERSION = (%d, %d)\n" % (_library(), version[0], version[1]))


def _metadata(version):
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nRequires-Python: >=3.9\n"
            % (NAME, ".".join(map(str, version)), SUMMARY))


def _files(version):
    """(archive name, bytes) of the wheel's package files."""
    folder = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".py"):
            continue
        data = (_build_info(version).encode() if name == "_build_info.py"
                else open(os.path.join(folder, name), "rb").read())
        yield "%s/%s" % (NAME, name), data


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d\n" % (name, digest, len(data))


def _dist_info(version):
    return "%s-%s.dist-info" % (NAME, ".".join(map(str, version)))


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    version = _version()
    folder = os.path.join(metadata_directory, _dist_info(version))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "METADATA"), "w") as f:
        f.write(_metadata(version))
    return os.path.basename(folder)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    dist = _dist_info(version)
    wheel = "%s-%s-py3-none-any.whl" % (NAME, ".".join(map(str, version)))
    entries = list(_files(version)) + [
        (dist + "/METADATA", _metadata(version).encode()),
        (dist + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: sagerun\nRoot-Is-Purelib: true\n"
                          b"Tag: py3-none-any\n")]
    record = "".join(_record_line(n, d) for n, d in entries) + dist + "/RECORD,,\n"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries + [(dist + "/RECORD", record.encode())]:
            z.writestr(name, data)
    return wheel
