# Fuzzing of the parsers of untrusted files with libFuzzer (clang), under ASan and UBSan.
# Included by the top Makefile. One target per parser:
#   fuzz_safetensors  sr_safetensors_open (+ find/expect/read, sr_workload_from_safetensors)
#   fuzz_workload     sr_workload_parse (+ to_json round trip)
#   fuzz_report       the report reader of `sagerun show` / `sagerun diff`
#   fuzz_declare      the declaration lines of Python variant files (variants/python/declare.c)
# The library's C sources are compiled again by clang, with coverage instrumentation and the
# sanitizers, into $(B)/fuzz/ (the gcc-built archive is not used; no CUDA kernels are linked).
#
#   make fuzz-build                  builds $(B)/fuzz/fuzz_<target>
#   make fuzz [FUZZ_SECONDS=60]      runs each target that long on its seed corpus
#                                    (test/fuzz/corpus/<target>, read-only) plus a working corpus
#                                    in $(B)/fuzz/corpus/<target>; exits non-zero on a crash, leak
#                                    or timeout, leaving the input in $(B)/fuzz/artifacts/
#   make fuzz FUZZ_TARGETS=report    one target only
# Reproduce a finding: $(B)/fuzz/fuzz_<target> <file>
FUZZ_CC       ?= clang
FUZZ_SECONDS  ?= 60
FUZZ_TARGETS  ?= safetensors workload report declare
FUZZ_FLAGS    ?= -timeout=10 -rss_limit_mb=2048 -max_len=16384
FUZZ_OUT      := $(B)/fuzz
FUZZ_SAN      := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS   := -std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Wno-unused-parameter $(FUZZ_SAN) \
                 -Iinclude -Ilibsagerun -I$(CUDA_HOME)/include -MMD -MP \
                 -DSAGERUN_PLUGINDIR='"$(PLUGINDIR)"' -DSAGERUN_GIT_COMMIT='"fuzz"' \
                 -DSAGERUN_SOURCE_DIR='"$(CURDIR)"'
FUZZ_LIB_OBJ  := $(patsubst libsagerun/%.c,$(FUZZ_OUT)/obj/%.o,$(wildcard libsagerun/*.c)) \
                 $(FUZZ_OUT)/obj/no_kernels.o
FUZZ_BINS     := $(FUZZ_TARGETS:%=$(FUZZ_OUT)/fuzz_%)

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS)

# Library code: instrumented for coverage (fuzzer-no-link), hidden symbols stay reachable.
$(FUZZ_OUT)/obj/%.o: libsagerun/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -DSAGERUN_BUILDING_LIBRARY -c $< -o $@

$(FUZZ_OUT)/obj/no_kernels.o: test/fuzz/no_kernels.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_OUT)/fuzz_%: test/fuzz/fuzz_%.c $(FUZZ_LIB_OBJ)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJ) $(LDLIBS)

# Each target runs FUZZ_SECONDS; a summary line per target, then the verdict.
fuzz: $(FUZZ_BINS)
	@mkdir -p $(FUZZ_OUT)/artifacts; failed=""; \
	for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(FUZZ_OUT)/corpus/$$t; log=$(FUZZ_OUT)/fuzz_$$t.log; \
	    dict=; [ -f test/fuzz/$$t.dict ] && dict=-dict=test/fuzz/$$t.dict; \
	    echo "fuzz_$$t: $(FUZZ_SECONDS) s (log: $$log)"; \
	    $(FUZZ_OUT)/fuzz_$$t $(FUZZ_FLAGS) $$dict -max_total_time=$(FUZZ_SECONDS) \
	        -print_final_stats=1 -artifact_prefix=$(FUZZ_OUT)/artifacts/$$t- \
	        $(FUZZ_OUT)/corpus/$$t test/fuzz/corpus/$$t > $$log 2>&1; rc=$$?; \
	    execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $$log | tail -1); \
	    secs=$$(sed -n 's/^stat::average_exec_per_sec: *//p' $$log | tail -1); \
	    cov=$$(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' $$log | tail -1); \
	    if [ $$rc -eq 0 ]; then \
	        echo "ok    fuzz_$$t: $${execs:-?} executions ($${secs:-?}/s), $$cov, no crash"; \
	    else \
	        failed="$$failed $$t"; \
	        echo "FAIL  fuzz_$$t: exit $$rc after $${execs:-?} executions"; \
	        grep -v '^#[0-9]' $$log | grep -v '^INFO:' | head -60; \
	        ls $(FUZZ_OUT)/artifacts/$$t-* 2>/dev/null | sed 's/^/      input: /'; \
	    fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: FAILED:$$failed"; exit 1; fi; \
	echo "fuzz: $(words $(FUZZ_TARGETS)) targets, no crash"

# Header dependencies (.d files under $(B)) are included by the top Makefile.
