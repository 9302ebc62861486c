# sagerun — one GNU Makefile: library, CLI, plugins, tests, examples, install.
# Local overrides (CUDA_HOME, PREFIX, CFLAGS, ...) go in config.mak.
-include config.mak

VERSION       := 0.1.0
SOVERSION     := 0
PREFIX        ?= /usr/local
DESTDIR       ?=
LIBDIR        ?= $(PREFIX)/lib
PLUGINDIR     ?= $(LIBDIR)/sagerun/plugins
CUDA_HOME     ?= /usr/local/cuda
NVCC          ?= $(CUDA_HOME)/bin/nvcc
CC            ?= cc
B             := build
# Without nvcc (not installed, or NVCC names no program) the build has no GPU code: the library
# without its kernels and without cuda.h (SAGERUN_NO_CUDA: its CUDA backend says it was built
# without CUDA), the plugins without a .cu file, and the tests that need a GPU image skipped.
HAVE_NVCC     := $(if $(shell command -v '$(NVCC)' 2>/dev/null),1)
# The commit that reports name (source_commit): HEAD, with "-dirty" when tracked files differ from
# it. The objects that embed it depend on a stamp file that changes only when the value does, so a
# report never names an older commit than the code that ran.
GIT_COMMIT    := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell \
                   git diff --quiet HEAD -- 2>/dev/null; [ $$? -eq 1 ] && echo -dirty)
COMMIT_STAMP  := $(B)/git-commit.txt
$(shell mkdir -p $(B) && { echo '$(GIT_COMMIT)' | cmp -s - $(COMMIT_STAMP) || echo '$(GIT_COMMIT)' > $(COMMIT_STAMP); })

.SECONDEXPANSION:
# Keep intermediate files (fatbins, objects): nvcc builds are slow.
.SECONDARY:

# SANITIZE=address,undefined builds everything (tests included) with those sanitizers.
# Plugins land in plugins/; a sanitizer build keeps its own (they need the sanitizer runtime) in
# $(B)/plugins, where that build's programs look first. Use a separate B, e.g.
#   make B=build-asan SANITIZE=address,undefined test
# A build without nvcc keeps its (host) plugins in $(B)/plugins as well, so that they never mix
# with a CUDA build's in plugins/.
PLUGIN_OUT    := plugins
ifneq ($(SANITIZE),)
SAN_FLAGS     := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
PLUGIN_OUT    := $(B)/plugins
endif
ifneq ($(HAVE_NVCC),1)
PLUGIN_OUT    := $(B)/plugins
endif

WARN          := -Wall -Wextra -Wshadow -Wno-format-truncation -Wstrict-prototypes
CFLAGS        ?= -O2 -g
ALL_CFLAGS    := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -fPIC -fvisibility=hidden $(SAN_FLAGS) \
                 -Iinclude -Ilibsagerun $(if $(HAVE_NVCC),-I$(CUDA_HOME)/include,-DSAGERUN_NO_CUDA) \
                 -MMD -MP -DSAGERUN_PLUGINDIR='"$(PLUGINDIR)"' -DSAGERUN_GIT_COMMIT='"$(GIT_COMMIT)"'
LIB_CFLAGS    := $(ALL_CFLAGS) -DSAGERUN_BUILDING_LIBRARY
LDLIBS        := -ljansson -lsodium -lm -ldl -lpthread
# sagerun plot draws with cairo (libcairo2-dev: real text extents; SVG, PNG and PDF surfaces). Its
# headers are needed to build; the libraries are loaded when a figure is drawn (cli/cairo_lib.h),
# so that the other commands run where cairo is not installed.
CAIRO_CFLAGS  := $(shell pkg-config --cflags cairo fontconfig 2>/dev/null)
CAIRO_LIBS    := $(shell pkg-config --libs cairo fontconfig 2>/dev/null)

# Every GPU image: SASS for sm_89 and sm_90, PTX for compute_89 (JIT for newer parts), unless a
# variant names its own targets (VARIANT_ARCHS_<name>, below).
# -ftz=true: SAGE2.md's fp32 arithmetic is flush-to-zero. Variants all use VARIANT_NVCC_FLAGS
# (--use_fast_math, as SageAttention builds; every bit-relevant operation in the sage2 kernels is
# written with explicit rounding intrinsics or PTX, so contraction choices cannot differ).
CUDA_ARCHS    := -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90,code=sm_90 \
                 -gencode arch=compute_89,code=compute_89
NVCC_FLAGS    ?= -O3 -std=c++17 -ftz=true -Xptxas -v
ALL_NVCC      := $(NVCC_FLAGS) $(CUDA_ARCHS) -Iinclude -Ilibsagerun
VARIANT_NVCC_FLAGS ?= -O3 -std=c++17 --use_fast_math -Xptxas -v
# A variant may name its own targets: VARIANT_ARCHS_<name>. interleave-softmax has an sm_90a path
# (wgmma) instead of plain sm_90 SASS, so that Hopper loads that one.
VARIANT_ARCHS_interleave-softmax := -gencode arch=compute_89,code=sm_89 \
                 -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_89,code=compute_89
# warp-specialized is Hopper code only (TMA, mbarriers, setmaxnreg, wgmma): it refuses other parts.
VARIANT_ARCHS_warp-specialized := -gencode arch=compute_90a,code=sm_90a

# nvcc to a fatbin with flags $(1) from sources $(2); ptxas's report (registers, spills) is kept
# beside it in .ptxas.txt and printed when the build fails.
nvcc_fatbin = $(NVCC) $(1) -fatbin $(2) -o $@ 2> $(@:.fatbin=.ptxas.txt) || { cat $(@:.fatbin=.ptxas.txt); exit 1; }
# A fatbin ($<) embedded as read-only data under the symbol $(1).
embed_image = $(CC) -c -DSR_IMAGE_SYMBOL=$(1) -DSR_IMAGE_FILE='"$<"' libsagerun/incbin.S -o $@

# ---- the library -------------------------------------------------------------------------------
LIB_SRC       := $(wildcard libsagerun/*.c)
LIB_OBJ       := $(LIB_SRC:%.c=$(B)/obj/%.o)
KERNEL_SRC    := $(if $(HAVE_NVCC),$(wildcard libsagerun/kernels/*.cu))
KERNEL_NAMES  := $(notdir $(KERNEL_SRC:.cu=))
KERNEL_OBJ    := $(KERNEL_NAMES:%=$(B)/kernels/%_image.o) $(B)/kernels/library_images.o
CLI_SRC       := $(wildcard libsagerun/cli/*.c)
CLI_OBJ       := $(CLI_SRC:%.c=$(B)/obj/%.o)

LIB_REAL      := $(B)/lib/libsagerun.so.$(VERSION)
LIB_SONAME    := libsagerun.so.$(SOVERSION)
LIB_INTERNAL  := $(B)/lib/libsagerun_internal.a
CLI           := $(B)/bin/sagerun

# ---- plugins: variants/<name>/*.c (+ at most one .cu) -> plugins/<name>.so ----------------------
ALL_VARIANTS  := $(filter-out common python,$(notdir $(patsubst %/,%,$(wildcard variants/*/))))
# the variants (and test plugins) with GPU code, which a build without nvcc skips
CUDA_VARIANTS := $(foreach v,$(ALL_VARIANTS),$(if $(wildcard variants/$(v)/*.cu),$(v)))
VARIANTS      := $(if $(HAVE_NVCC),$(ALL_VARIANTS),$(filter-out $(CUDA_VARIANTS),$(ALL_VARIANTS)))
PLUGINS       := $(VARIANTS:%=$(PLUGIN_OUT)/%.so)
ifeq ($(HAVE_NVCC)$(MAKELEVEL),0)
$(info sagerun: no nvcc at $(NVCC) (set CUDA_HOME or NVCC): building without CUDA, host backend only)
$(info sagerun: skipped plugins (they have CUDA kernels): $(strip $(CUDA_VARIANTS)))
endif

# ---- the Python bridge: variants/python -> $(PLUGIN_OUT)/python/{bridge,embed}.so -----------------
# Python variants (.py files declaring variants) run through it. embed.so is built against the
# stable ABI (Py_LIMITED_API) with the headers of $(PYTHON3), and runs with any CPython from 3.9 on,
# found at run time (SAGERUN_PYTHON); without Python headers (python3-dev) it is not built.
PYTHON3       ?= python3
PY_INCLUDE    := $(shell $(PYTHON3) -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
HAVE_PYTHON   := $(if $(wildcard $(PY_INCLUDE)/Python.h),1)
PY_LIMITED    := 0x03090000
PY_BRIDGE_OBJ := $(patsubst variants/python/%.c,$(B)/python/%.o,$(filter-out variants/python/embed%.c,$(wildcard variants/python/*.c)))
PY_EMBED_OBJ  := $(patsubst variants/python/%.c,$(B)/python/%.o,$(wildcard variants/python/embed*.c)) $(B)/python/sagerun_py.o
PY_BRIDGE     := $(if $(HAVE_PYTHON),$(PLUGIN_OUT)/python/bridge.so $(PLUGIN_OUT)/python/embed.so)
ifeq ($(HAVE_PYTHON)$(MAKELEVEL),0)
$(info sagerun: no Python headers for $(PYTHON3) (python3-dev): the Python bridge is not built)
endif

# ---- tests --------------------------------------------------------------------------------------
UNIT_TESTS    := $(patsubst test/unit/%.c,$(B)/test/%,$(wildcard test/unit/test_*.c))
GPU_TESTS     := $(patsubst test/gpu/%.c,$(B)/test/gpu/%,$(wildcard test/gpu/test_*.c))
FAKE_SRC      := $(wildcard test/plugins/*.c)
FAKE_SRC      := $(if $(HAVE_NVCC),$(FAKE_SRC),$(filter-out $(patsubst %.cu,%.c,$(wildcard test/plugins/*.cu)),$(FAKE_SRC)))
FAKE_PLUGINS  := $(patsubst test/plugins/%.c,$(B)/test-plugins/%.so,$(FAKE_SRC))
CLI_TESTS     := $(wildcard test/cli/test_*.sh)
# A stand-in for nsys/ncu that logs the NVTX ranges it is handed (test/nvtx/fake_tool.c): it needs
# the toolkit's nvtx3 header, so a build without CUDA has none (and no ranges to log).
NVTX_TOOL     := $(if $(HAVE_NVCC),$(B)/test/nvtx/fake_tool.so)

.PHONY: all lib cli plugins tests test test-gpu check-install check-abi update-abi install uninstall clean
all: lib cli plugins tests

lib: $(B)/lib/libsagerun.so $(LIB_INTERNAL)
cli: $(CLI)
plugins: $(PLUGINS) $(PY_BRIDGE)
PARITY_TOOL   := $(B)/test/gpu/parity/kmean_dump
tests: $(UNIT_TESTS) $(GPU_TESTS) $(FAKE_PLUGINS) $(PARITY_TOOL) $(NVTX_TOOL)

# Every object that bakes the commit in (reports' source_commit, --version, merge and sweep
# summaries) is rebuilt when it changes: found by name, so that moving the code cannot leave one
# behind (assemble.c was, after the report assembly left compare.c, and reports named a stale commit).
COMMIT_USERS  := $(patsubst %.c,$(B)/obj/%.o,$(shell grep -l SAGERUN_GIT_COMMIT libsagerun/*.c libsagerun/cli/*.c))
$(COMMIT_USERS): $(COMMIT_STAMP)

$(B)/obj/libsagerun/%.o: libsagerun/%.c
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

# Each kernel file becomes one fatbin, embedded with .incbin under a symbol of its own.
$(B)/kernels/%.fatbin: libsagerun/kernels/%.cu $(wildcard libsagerun/kernels/*.h)
	@mkdir -p $(@D)
	$(call nvcc_fatbin,$(ALL_NVCC),$<)

$(B)/kernels/%_image.o: $(B)/kernels/%.fatbin libsagerun/incbin.S
	$(call embed_image,sr_image_$(subst -,_,$*))

$(B)/kernels/library_images.c: Makefile $(KERNEL_SRC)
	@mkdir -p $(@D)
	@{ echo '/* generated by the Makefile: one entry per .cu file of libsagerun/kernels */'; \
	   echo '#include "library_images.h"'; \
	   for k in $(subst -,_,$(KERNEL_NAMES)); do echo "extern const unsigned char sr_image_$$k[];"; done; \
	   echo 'const sr_library_image sr_library_images[] = {'; \
	   for k in $(subst -,_,$(KERNEL_NAMES)); do echo "    {\"$$k\", sr_image_$$k},"; done; \
	   echo '    {0, 0}};'; } > $@

$(B)/kernels/library_images.o: $(B)/kernels/library_images.c
	$(CC) $(LIB_CFLAGS) -c $< -o $@

$(LIB_REAL): $(LIB_OBJ) $(KERNEL_OBJ) libsagerun/libsagerun.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--version-script=libsagerun/libsagerun.map \
	    -Wl,--no-undefined $(SAN_FLAGS) -o $@ $(LIB_OBJ) $(KERNEL_OBJ) $(LDLIBS)

$(B)/lib/libsagerun.so: $(LIB_REAL)
	ln -sf libsagerun.so.$(VERSION) $(B)/lib/$(LIB_SONAME)
	ln -sf libsagerun.so.$(VERSION) $@

# All library objects, hidden symbols included, for the CLI and the unit tests.
$(LIB_INTERNAL): $(LIB_OBJ) $(KERNEL_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# The CLI is a client of libsagerun.so like any other program: the public headers only (no
# -Ilibsagerun: an internal header does not compile), linked against the .so alone, found next to
# the binary ($ORIGIN/../lib: build/lib in the tree, $(PREFIX)/lib installed) or on the loader's
# path. test/cli/test_cli_links_library.sh fails if it ever links the internals again.
CLI_CFLAGS    := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(SAN_FLAGS) -Iinclude -MMD -MP \
                 $(if $(HAVE_NVCC),,-DSAGERUN_NO_CUDA) -DSAGERUN_GIT_COMMIT='"$(GIT_COMMIT)"'
CLI_RPATH     := '$$ORIGIN/../lib'$(if $(filter $(PREFIX)/lib,$(LIBDIR)),,:$(LIBDIR))

$(B)/obj/libsagerun/cli/%.o: libsagerun/cli/%.c
	@mkdir -p $(@D)
	$(CC) $(CLI_CFLAGS) $(CAIRO_CFLAGS) -c $< -o $@

$(CLI): $(CLI_OBJ) $(B)/lib/libsagerun.so
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $(CLI_OBJ) -L$(B)/lib -lsagerun -ljansson -lm -ldl \
	    -Wl,--no-undefined -Wl,-rpath,$(CLI_RPATH)

# Without cairo the CLI cannot be built, and make says why (make lib plugins still build).
ifeq ($(CAIRO_LIBS),)
$(CLI_OBJ) $(CLI): cairo-missing
.PHONY: cairo-missing
cairo-missing:
	@echo "sagerun: cairo not found (pkg-config cairo): the sagerun command draws its figures with" \
	      "it; install libcairo2-dev (tools/install-deps.sh does)" >&2; exit 1
endif

# ---- plugins ------------------------------------------------------------------------------------
PLUGIN_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -fPIC -fvisibility=hidden $(SAN_FLAGS) -Iinclude -MMD -MP \
                 $(if $(HAVE_NVCC),-I$(CUDA_HOME)/include)

$(B)/variants/%.o: variants/%.c
	@mkdir -p $(@D)
	$(CC) $(PLUGIN_CFLAGS) -c $< -o $@

$(B)/variants/%/image.fatbin: $$(wildcard variants/%/*.cu) $(wildcard variants/common/*)
	@mkdir -p $(@D)
	$(call nvcc_fatbin,$(VARIANT_NVCC_FLAGS) $(or $(VARIANT_ARCHS_$*),$(CUDA_ARCHS)) -Iinclude,\
	    $(filter %.cu,$^))

$(B)/variants/%/image.o: $(B)/variants/%/image.fatbin libsagerun/incbin.S
	$(call embed_image,sagerun_variant_image)

$(PLUGIN_OUT)/%.so: $$(addprefix $(B)/,$$(addsuffix .o,$$(basename $$(wildcard variants/$$*/*.c)))) \
              $$(if $$(wildcard variants/$$*/*.cu),$(B)/variants/$$*/image.o)
	@mkdir -p $(@D)
	$(CC) -shared $(SAN_FLAGS) -Wl,--no-undefined -o $@ $^ -lm -lpthread
	@chmod go-w $@ $(@D) # sagerun refuses plugins that others can write (whatever the umask)

# The bridge has no Python symbol (it loads anywhere); embed.so resolves its Py* symbols against the
# libpython the bridge loads with RTLD_GLOBAL (so: no --no-undefined).
$(filter-out %/sagerun_py.o,$(PY_EMBED_OBJ)): $(B)/python/%.o: variants/python/%.c
	@mkdir -p $(@D)
	$(CC) $(PLUGIN_CFLAGS) -I$(PY_INCLUDE) -DPy_LIMITED_API=$(PY_LIMITED) -c $< -o $@

$(B)/python/%.o: variants/python/%.c
	@mkdir -p $(@D)
	$(CC) $(PLUGIN_CFLAGS) -Ilibsagerun -c $< -o $@

$(B)/python/sagerun_py.o: python/sagerun/_bridge.py libsagerun/incbin.S
	@mkdir -p $(@D)
	$(call embed_image,py_sagerun_source)

$(PLUGIN_OUT)/python/bridge.so: $(PY_BRIDGE_OBJ)
	@mkdir -p $(@D)
	$(CC) -shared $(SAN_FLAGS) -Wl,--no-undefined -o $@ $^ -ldl -lpthread
	@chmod go-w $@ $(@D)

$(PLUGIN_OUT)/python/embed.so: $(PY_EMBED_OBJ)
	@mkdir -p $(@D)
	$(CC) -shared $(SAN_FLAGS) -o $@ $^ -lm
	@chmod go-w $@ $(@D)

# ---- tests --------------------------------------------------------------------------------------
TEST_CFLAGS := $(ALL_CFLAGS) -Wno-unused-parameter -DSAGERUN_TEST_PLUGINS='"$(CURDIR)/$(PLUGIN_OUT)"' \
               -DSAGERUN_TEST_FAKES='"$(CURDIR)/$(B)/test-plugins"' \
               $(if $(NVTX_TOOL),-DSAGERUN_TEST_NVTX_TOOL='"$(CURDIR)/$(NVTX_TOOL)"')

$(B)/test/%: test/unit/%.c $(LIB_INTERNAL)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -DSAGERUN_SOURCE_DIR='"$(CURDIR)"' -rdynamic -o $@ $< $(LIB_INTERNAL) -lcmocka $(LDLIBS)

# test_api_*: the public API as a program that uses it sees it: public headers, libsagerun.so.
API_TEST_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(SAN_FLAGS) -Iinclude -MMD -MP \
                   -Wno-unused-parameter -DSAGERUN_TEST_PLUGINS='"$(CURDIR)/$(PLUGIN_OUT)"' \
                   -DSAGERUN_TEST_FAKES='"$(CURDIR)/$(B)/test-plugins"' -DSAGERUN_SOURCE_DIR='"$(CURDIR)"'
$(B)/test/test_api_%: test/unit/test_api_%.c $(B)/lib/libsagerun.so
	@mkdir -p $(@D)
	$(CC) $(API_TEST_CFLAGS) -o $@ $< -L$(B)/lib -lsagerun -lcmocka -lm \
	    -Wl,-rpath,'$$ORIGIN/../lib'

$(B)/test/gpu/%: test/gpu/%.c $(LIB_INTERNAL)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -DSAGERUN_SOURCE_DIR='"$(CURDIR)"' -rdynamic -o $@ $< $(LIB_INTERNAL) -lcmocka $(LDLIBS)

$(NVTX_TOOL): test/nvtx/fake_tool.c
	@mkdir -p $(@D)
	$(CC) $(PLUGIN_CFLAGS) -I$(CUDA_HOME)/include -shared -o $@ $<

# The parity script's helper (test/gpu/parity): the public API only, linked like an application.
$(PARITY_TOOL): test/gpu/parity/kmean_dump.c $(B)/lib/libsagerun.so
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -o $@ $< -L$(B)/lib -lsagerun -Wl,-rpath,'$$ORIGIN/../../../lib'

$(B)/test-plugins/%.fatbin: test/plugins/%.cu
	@mkdir -p $(@D)
	$(call nvcc_fatbin,$(ALL_NVCC),$<)

$(B)/test-plugins/%_image.o: $(B)/test-plugins/%.fatbin libsagerun/incbin.S
	$(call embed_image,sagerun_variant_image)

# A test plugin is test/plugins/NAME.c, plus NAME.cu when it has GPU code.
$(B)/test-plugins/%.so: test/plugins/%.c $$(if $$(wildcard test/plugins/$$*.cu),$(B)/test-plugins/$$*_image.o)
	@mkdir -p $(@D)
	$(CC) $(PLUGIN_ABI_FIRST) $(PLUGIN_CFLAGS) -shared -o $@ $< $(filter %_image.o,$^) -lm
	@chmod go-w $@ $(@D)
# abi10_*.c are ABI 1.0 fixtures: built against the frozen 1.0 header, which comes first.
$(B)/test-plugins/abi10_%.so: PLUGIN_ABI_FIRST := -Itest/plugins/abi-1.0
# abi11_*.c: ABI 1.1 fixtures, against the frozen 1.1 headers (sagerun_problem before it grew).
$(B)/test-plugins/abi11_%.so: PLUGIN_ABI_FIRST := -Itest/plugins/abi-1.1 -Itest/plugins/abi-1.0

# Runs every CPU test; prints one line per program and the totals. Exit status non-zero on failure.
# The plugin scanner's cache of the tests is their own (a fresh one each run).
test: all
	@rm -rf $(B)/test-cache && mkdir -m 700 $(B)/test-cache
	@SAGERUN=$(CURDIR)/$(CLI) SAGERUN_TEST_FAKES=$(CURDIR)/$(B)/test-plugins \
	    SAGERUN_CACHE_DIR=$(CURDIR)/$(B)/test-cache test/run-tests.sh $(UNIT_TESTS) $(CLI_TESTS)
ifeq ($(SANITIZE),)
	@$(MAKE) --no-print-directory check-install > $(B)/check-install.log 2>&1 \
	    && echo "ok    check-install (log: $(B)/check-install.log)" \
	    || { cat $(B)/check-install.log; echo "FAIL  check-install"; exit 1; }
endif

# GPU tests: each skips with a message when no CUDA device is present.
test-gpu: all
	@SAGERUN=$(CURDIR)/$(CLI) SAGERUN_TEST_FAKES=$(CURDIR)/$(B)/test-plugins \
	    test/run-tests.sh $(GPU_TESTS)

# Installs into a temporary prefix, builds examples/link-c there with pkg-config only, and runs
# it: the installed library must find its installed plugins and match the build's output.
STAGE := $(CURDIR)/$(B)/stage
check-install: lib cli plugins
	rm -rf $(STAGE)
	$(MAKE) --no-print-directory install PREFIX=$(STAGE) >/dev/null
	PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig $(CC) -std=c11 -Wall -Wextra -Werror \
	    examples/link-c/run_variant.c \
	    $$(PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig pkg-config --cflags --libs sagerun) \
	    -Wl,-rpath,$(STAGE)/lib -o $(B)/run_variant
	readelf -d $(STAGE)/lib/libsagerun.so | grep -q 'SONAME.*libsagerun.so.$(SOVERSION)'
	@# the installed CLI runs on the installed library (README "Library")
	test "$$(ldd $(STAGE)/bin/sagerun | awk '$$1 == "$(LIB_SONAME)" { print $$3 }' | xargs -r readlink -f)" = \
	     "$$(readlink -f $(STAGE)/lib/$(LIB_SONAME))"
	SAGERUN_PLUGIN_PATH= $(B)/run_variant reference 1,64,2,64 | tee $(B)/run_variant.out
	grep -q "from $(STAGE)/lib/sagerun/plugins/reference.so" $(B)/run_variant.out
	test "$$(grep 'output sha256' $(B)/run_variant.out | cut -d' ' -f3)" = \
	     "$$($(CLI) run --variant reference --shape 1,64,2,64 --backend host --iterations 1 \
	          --warmup 0 2>/dev/null | sed -n 's/^output_sha256 //p')"
ifeq ($(HAVE_PYTHON),1)
	$(STAGE)/bin/sagerun list --backend host --plugin examples/python/numpy_attention.py | tee $(B)/python-list.out
	grep -q "numpy-reference .*host" $(B)/python-list.out # the installed Python bridge reads .py files
endif
	@# the installed Python package loads the installed library (not the build's)
	if info=$$(find $(STAGE) -path '*/sagerun/_build_info.py' | head -1) && [ -n "$$info" ]; then \
	    env -u SAGERUN_LIBRARY PYTHONPATH=$$(dirname $$(dirname $$info)) $(PYTHON3) -c \
	        'import sagerun; print(sagerun.library_version())' | tee $(B)/python-package.out && \
	    grep -q "$(STAGE)/lib/$(LIB_SONAME)" $(B)/python-package.out; fi
ifeq ($(HAVE_NVCC),1)
	rm -rf $(B)/my-variant $(B)/dropin && cp -r examples/my-variant $(B)/my-variant && mkdir -p $(B)/dropin
	PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig $(MAKE) --no-print-directory -C $(B)/my-variant NVCC=$(NVCC)
	install -m 0755 $(B)/my-variant/my-variant.so $(B)/dropin/ && chmod go-w $(B)/dropin
	SAGERUN_PLUGIN_PATH=$(CURDIR)/$(B)/dropin $(STAGE)/bin/sagerun list --backend host | tee $(B)/dropin.out
	grep -q "my-variant .*template: plain fp16 attention" $(B)/dropin.out
	for ex in runtime-api tuned-variant; do rm -rf $(B)/$$ex && cp -r examples/$$ex $(B)/$$ex && \
	    PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig $(MAKE) --no-print-directory -C $(B)/$$ex NVCC=$(NVCC) || exit 1; done
	install -m 0755 $(B)/runtime-api/runtime-api.so $(B)/tuned-variant/tuned.so $(B)/dropin/
	SAGERUN_PLUGIN_PATH=$(CURDIR)/$(B)/dropin $(STAGE)/bin/sagerun list --backend host | tee $(B)/dropin.out
	grep -q "runtime-api .*<<<>>> on sagerun's stream" $(B)/dropin.out
	grep -q "param block int = 128 \[32, 1024\]" $(B)/dropin.out
	! grep -A3 "^rejected" $(B)/dropin.out | grep -q dropin
	@echo "check-install: installed library (the installed CLI's too), headers, pkg-config, plugins and the out-of-tree variants (my-variant, runtime-api, tuned-variant) work"
else
	@echo "check-install: SKIP the out-of-tree variants (examples/my-variant, runtime-api, tuned-variant have CUDA code; no nvcc)"
	@echo "check-install: installed library (the installed CLI's too), headers, pkg-config and plugins work"
endif

# ---- ABI -----------------------------------------------------------------------------------------
# The exported symbols must equal abi/libsagerun.symbols, and abidiff (abigail-tools) must find no
# change at all in libsagerun.so nor in the plugin ABI structs against abi/*.abi: even a change
# the ABI promise allows (a field appended to a size-prefixed struct, a new function) is reviewed
# and recorded with `make update-abi` (commit abi/ with it). abidiff's exit status: bit 4 = some
# ABI change, bit 8 = an incompatible one; both fail here, and the report says which it was.
ABI_PROBE := $(B)/abi/plugin_abi_probe.so
$(ABI_PROBE): abi/plugin_abi_probe.c include/sagerun/plugin.h include/sagerun/sagerun.h \
             include/sagerun/sage2.h
	@mkdir -p $(@D)
	$(CC) -std=c11 -g -O0 -fPIC -shared -fvisibility=hidden -Iinclude -o $@ $<

$(B)/abi/libsagerun.symbols: $(LIB_REAL)
	@mkdir -p $(@D)
	nm -D --defined-only $< | awk '{print $$3}' | sort > $@

check-abi: $(B)/abi/libsagerun.symbols $(ABI_PROBE)
	@diff -u abi/libsagerun.symbols $(B)/abi/libsagerun.symbols \
	    || { echo "check-abi: exported symbols changed (make update-abi after an intended change)"; exit 1; }
	@for pair in "libsagerun abi/libsagerun.abi $(LIB_REAL) abi/internal.suppr" \
	             "plugin abi/plugin.abi $(ABI_PROBE)"; do \
	    set -- $$pair; abidiff $${4:+--suppressions $$4} $$2 $$3 > $(B)/abi/$$1.diff; rc=$$?; \
	    if [ $$rc -ne 0 ]; then cat $(B)/abi/$$1.diff; \
	        echo "check-abi: $$1 ABI differs from $$2 (abidiff exit $$rc: $$( [ $$((rc & 8)) -ne 0 ] && echo incompatible || echo 'a change; compatible only if it follows the ABI promise'))"; \
	        exit 1; fi; done
	@echo "check-abi: $$(grep -c '^sagerun_' abi/libsagerun.symbols) exported functions and both ABIs as committed"

update-abi: $(B)/abi/libsagerun.symbols $(ABI_PROBE)
	cp $(B)/abi/libsagerun.symbols abi/libsagerun.symbols
	abidw --no-corpus-path --out-file abi/libsagerun.abi $(LIB_REAL)
	abidw --no-corpus-path --out-file abi/plugin.abi $(ABI_PROBE)

# ---- install ------------------------------------------------------------------------------------
define PY_SITE_SCRIPT
import site, sys, sysconfig
prefix = sys.argv[1].rstrip("/") + "/"
mine = [p for p in site.getsitepackages() if p.startswith(prefix)]
print(mine[0] if mine else sysconfig.get_path("purelib", "posix_prefix", {"base": prefix[:-1]}))
endef
export PY_SITE_SCRIPT
install: lib cli plugins
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PLUGINDIR) \
	    $(DESTDIR)$(PREFIX)/include/sagerun $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(LIB_REAL) $(DESTDIR)$(LIBDIR)/
	ln -sf libsagerun.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	ln -sf libsagerun.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libsagerun.so
	install -m 0644 include/sagerun/*.h $(DESTDIR)$(PREFIX)/include/sagerun/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@PLUGINDIR@|$(PLUGINDIR)|' sagerun.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/sagerun.pc
	install -m 0755 $(CLI) $(DESTDIR)$(PREFIX)/bin/
	install -m 0755 $(PLUGINS) $(DESTDIR)$(PLUGINDIR)/
ifeq ($(HAVE_PYTHON),1)
	install -d $(DESTDIR)$(PLUGINDIR)/python
	install -m 0755 $(PY_BRIDGE) $(DESTDIR)$(PLUGINDIR)/python/
endif
	@# the Python package (python/), built for the installed library, where $(PYTHON3) has pip:
	@# into PYTHON_SITE, the interpreter's own site folder under PREFIX (Debian's
	@# /usr/local/lib/python3.X/dist-packages) or else PREFIX/lib/python3.X/site-packages
	@if $(PYTHON3) -m pip --version >/dev/null 2>&1; then \
	    site=$${PYTHON_SITE:-$$($(PYTHON3) -c "$$PY_SITE_SCRIPT" $(PREFIX))}; \
	    echo "installing the sagerun Python package into $(DESTDIR)$$site"; \
	    SAGERUN_BUILD_LIBRARY=$(LIBDIR)/$(LIB_SONAME) $(PYTHON3) -m pip install --quiet --no-index \
	        --no-deps --no-cache-dir --upgrade --target "$(DESTDIR)$$site" ./python || exit 1; \
	else echo "sagerun: $(PYTHON3) has no pip (python3-pip): the Python package is not installed"; fi

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libsagerun.so* $(DESTDIR)$(LIBDIR)/pkgconfig/sagerun.pc \
	    $(DESTDIR)$(PREFIX)/bin/sagerun
	rm -rf $(DESTDIR)$(PREFIX)/include/sagerun $(DESTDIR)$(PLUGINDIR)
	site=$${PYTHON_SITE:-$$($(PYTHON3) -c "$$PY_SITE_SCRIPT" $(PREFIX) 2>/dev/null)}; \
	    [ -z "$$site" ] || rm -rf "$(DESTDIR)$$site/sagerun" "$(DESTDIR)$$site"/sagerun-*.dist-info

clean:
	rm -rf $(B) plugins/*.so plugins/python

# Fuzzing of the parsers (libFuzzer, clang): `make fuzz`, see test/fuzz/.
-include test/fuzz/fuzz.mk

-include $(shell find $(B) -name '*.d' 2>/dev/null)
