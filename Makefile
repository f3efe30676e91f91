# cgprof: build, test, install.  `make help` lists the targets.
# ARCH: the runtime's architecture (runtime/arch/$(ARCH)/): the host's
# (x86_64 or aarch64) builds everything; another, e.g. `make ARCH=aarch64`
# on x86-64, cross-builds the runtime alone (libcgprof.so, libcgprof.a)
# with aarch64-linux-gnu-gcc into build/aarch64/ (docs/architectures.md).
HOST_ARCH := $(shell uname -m | sed 's/^arm64$$/aarch64/')
ARCH    ?= $(HOST_ARCH)
PREFIX  ?= /usr/local
ifeq ($(ARCH),$(HOST_ARCH))
CC      ?= gcc
BUILD   ?= build
else
CROSS   ?= $(ARCH)-linux-gnu-
CC      := $(CROSS)gcc
BUILD   ?= build/$(ARCH)
endif
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 $(WARN)
CPPFLAGS += -D_GNU_SOURCE -Iinclude

include runtime/arch/$(ARCH)/arch.mk
RT_SRC  := runtime/events.c runtime/table.c runtime/arcs.c runtime/sample.c runtime/sampler.c runtime/modules.c runtime/profile.c runtime/threadlog.c runtime/threads.c runtime/write.c runtime/init.c runtime/signals.c runtime/endings.c runtime/cfi.c runtime/unwind.c runtime/stacks.c runtime/ratecap.c $(RT_ARCH_SRC)
RT_OBJ  := $(RT_SRC:%.c=$(BUILD)/%.o) $(RT_ARCH_ASM:%.S=$(BUILD)/%.o)
# interposers that only the shared runtime has (in a -static program libc.a's
# definitions stand): runtime/privileges.c, runtime/clone.c, and the
# architecture's (x86-64: dlopen)
RT_SO_OBJ := $(BUILD)/runtime/privileges.o $(BUILD)/runtime/clone.o $(RT_ARCH_SO:%.S=$(BUILD)/%.o)
RT_CFLAGS := -fPIC -fvisibility=hidden -ftls-model=initial-exec -fno-omit-frame-pointer -Iruntime -Iruntime/arch/$(ARCH)
# Extra flags for one side only, e.g. sanitizers (see tests/t0900-sanitizers.sh)
RT_EXTRA   ?=
TOOL_EXTRA ?=

TOOL_SRC := $(wildcard cli/*.c analysis/*.c output/*.c) runtime/events.c
TOOL_OBJ := $(TOOL_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/profile.pb-c.o $(BUILD)/output/html_assets.o
TOOL_LIBS := -ldw -lelf -lstdc++ -lprotobuf-c -lz -lm
# capstone is loaded by -c when it needs it (analysis/disasm.c), by the name
# the linker would have recorded
CS_SONAME := $(shell objdump -p "$$($(CC) -print-file-name=libcapstone.so)" 2>/dev/null | \
	awk '$$1 == "SONAME" { print $$2 }')
$(BUILD)/analysis/disasm.o: CPPFLAGS += $(if $(CS_SONAME),-DCS_SONAME='"$(CS_SONAME)"')
# pprof's profile.proto (output/profile.proto) compiled by protoc-c at build
# time, so that the generated code always matches the installed protobuf-c
PROTO_GEN := $(BUILD)/gen/profile.pb-c.c $(BUILD)/gen/profile.pb-c.h

.PHONY: all check demo bench install clean help deps fuzz mutants
ifeq ($(ARCH),$(HOST_ARCH))
all: $(BUILD)/libcgprof.so $(BUILD)/libcgprof.a $(BUILD)/cgprof
else
all: $(BUILD)/libcgprof.so $(BUILD)/libcgprof.a
endif

help:
	@echo "make [all]      build libcgprof.so, libcgprof.a and cgprof into $(BUILD)/"
	@echo "make ARCH=aarch64  cross-build the AArch64 runtime into build/aarch64/"
	@echo "make demo       build and profile the bundled demo, print its report"
	@echo "make check      run every test (ends with 'N passed, N failed')"
	@echo "make bench      overhead and speed, side by side with glibc/gprof"
	@echo "make install PREFIX=/usr/local"
	@echo "make deps       install the Debian packages the build and tests need"
	@echo "make fuzz       build the fuzzers, $(BUILD)/fuzz_gmon, fuzz_cgdata, fuzz_dwinfo (clang)"
	@echo "make mutants    apply each bug in tests/mutants/ in turn, report those no test catches"
	@echo "                (MUTANTS=WORDS picks mutants, TESTS=FILTER overrides their tests)"

deps:
	sh scripts/deps.sh

$(BUILD)/runtime/%.o: runtime/%.c runtime/rt.h runtime/archash.h runtime/arch/$(ARCH)/arch.h runtime/events.h runtime/writer.h runtime/unwind.h include/cgprof.h Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(RT_CFLAGS) $(RT_EXTRA) -c $< -o $@

$(BUILD)/runtime/arch/$(ARCH)/%.o: runtime/arch/$(ARCH)/%.S runtime/archash.h
	@mkdir -p $(dir $@)
	$(CC) -c $< -o $@

$(BUILD)/libcgprof.so: $(RT_OBJ) $(RT_SO_OBJ) runtime/exports.map
	$(CC) -shared $(RT_EXTRA) -o $@ $(RT_OBJ) $(RT_SO_OBJ) -Wl,--version-script=runtime/exports.map -Wl,-z,defs

$(BUILD)/libcgprof.a: $(RT_OBJ)
	rm -f $@
	ar rcs $@ $(RT_OBJ)

$(BUILD)/%.o: %.c $(wildcard analysis/*.h output/*.h cli/*.h) $(PROTO_GEN) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(TOOL_EXTRA) -Ianalysis -Ioutput -I$(BUILD)/gen -c $< -o $@

$(PROTO_GEN) &: output/profile.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen -Ioutput output/profile.proto

# the HTML report's page code and style, embedded with .incbin
$(BUILD)/output/html_assets.o: output/html_assets.S output/html/page.js output/html/page.css
	@mkdir -p $(dir $@)
	$(CC) -c $< -o $@

$(BUILD)/gen/profile.pb-c.o: $(PROTO_GEN)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(TOOL_EXTRA) -I$(BUILD)/gen -c $(BUILD)/gen/profile.pb-c.c -o $@

$(BUILD)/cgprof: $(TOOL_OBJ)
	$(CC) $(TOOL_EXTRA) -o $@ $(TOOL_OBJ) $(TOOL_LIBS)

demo: all
	sh scripts/demo.sh

check: all
	sh tests/run.sh

bench: all
	BASE='$(BASE)' sh bench/run.sh

# Mutation testing, not part of check: see tests/mutants/run.sh.
mutants:
	MUTANTS='$(MUTANTS)' TESTS='$(TESTS)' sh tests/mutants/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/cgprof $(DESTDIR)$(PREFIX)/bin/cgprof
	install -m 755 $(BUILD)/libcgprof.so $(DESTDIR)$(PREFIX)/lib/libcgprof.so
	install -m 644 $(BUILD)/libcgprof.a $(DESTDIR)$(PREFIX)/lib/libcgprof.a
	install -m 644 include/cgprof.h $(DESTDIR)$(PREFIX)/include/cgprof.h
	install -m 644 man/cgprof.1 $(DESTDIR)$(PREFIX)/share/man/man1/cgprof.1
	@# AArch64's runtime too, if `make ARCH=aarch64` built it (cgprof record
	@# runs AArch64 programs under qemu-aarch64 with it)
	@if [ "$(ARCH)" = x86_64 ] && [ -f $(BUILD)/aarch64/libcgprof.so ]; then \
	    install -d $(DESTDIR)$(PREFIX)/lib/cgprof/aarch64 && \
	    install -m 755 $(BUILD)/aarch64/libcgprof.so $(DESTDIR)$(PREFIX)/lib/cgprof/aarch64/libcgprof.so && \
	    install -m 644 $(BUILD)/aarch64/libcgprof.a $(DESTDIR)$(PREFIX)/lib/cgprof/aarch64/libcgprof.a; \
	fi

# libFuzzer target for the gmon.out readers; run it on tests/fuzz/corpus
# (see tests/t0240-fuzz.sh).
FUZZ_CC ?= clang
FUZZ_SRC := tests/fuzz/fuzz_gmon.c analysis/gmon.c analysis/gmon_write.c
fuzz: $(BUILD)/fuzz_gmon $(BUILD)/fuzz_cgdata $(BUILD)/fuzz_dwinfo
$(BUILD)/fuzz_gmon: $(FUZZ_SRC) analysis/gmon.h Makefile
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O1 $(WARN) -D_GNU_SOURCE -Ianalysis \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $(FUZZ_SRC) -lm -o $@
FUZZ_CG_SRC := tests/fuzz/fuzz_cgdata.c analysis/cgdata.c analysis/callgraph.c analysis/gmon.c \
    analysis/symtab.c analysis/elffile.c analysis/modmap.c analysis/kernel.c analysis/stacks.c \
    analysis/dwinfo.c \
    analysis/plt.c analysis/disasm.c output/gprof_text.c output/escape.c \
    output/json.c analysis/srcsamples.c analysis/linemap.c
$(BUILD)/fuzz_cgdata: $(FUZZ_CG_SRC) analysis/cgdata.h analysis/callgraph.h Makefile
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O1 $(WARN) -D_GNU_SOURCE -Ianalysis -Ioutput \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    $(FUZZ_CG_SRC) -ldw -lelf -lcapstone -lstdc++ -lm -o $@
$(BUILD)/fuzz_dwinfo: tests/fuzz/fuzz_dwinfo.c analysis/dwinfo.c analysis/dwinfo.h Makefile
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O1 $(WARN) -D_GNU_SOURCE -Ianalysis \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    tests/fuzz/fuzz_dwinfo.c analysis/dwinfo.c -ldw -lelf -o $@

clean:
	rm -rf $(BUILD)
