# SPDX-License-Identifier: MIT
# nnp: top-level build. `make` fetches QEMU's and the guest kernel's
# sources/packages from Debian and builds everything; `make check` runs the
# host and guest tests; `make demo` boots 4 devices; `make bench` measures
# the devices against the host (not part of check). Those three and `make
# deps` first install the Debian packages the build needs (saying which).
# A second `make` rebuilds only what changed.

BUILD := build
ROOT := $(CURDIR)
VERSION := 0.9.0
SOVERSION := 0

CC ?= gcc
CFLAGS_COMMON := -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror
DRM_CFLAGS = $(shell pkg-config --cflags libdrm)
DRM_LIBS = $(shell pkg-config --libs libdrm)
# What libnnp links: libdrm, and nettle for the rendezvous's HMAC-SHA256.
LIBNNP_LIBS = $(shell pkg-config --libs libdrm nettle)
# What nnptool's JSON is written with (tools/nnptool/json_out.c).
JSONC_CFLAGS = $(shell pkg-config --cflags json-c)
JSONC_LIBS = $(shell pkg-config --libs json-c)

SYSROOT := $(BUILD)/sysroot
KREL_FILE := $(SYSROOT)/kernel-release
KDIR := $(SYSROOT)/build
QEMU_SRC := $(BUILD)/qemu-src
QEMU_BUILD := $(BUILD)/qemu
QEMU := $(QEMU_BUILD)/qemu-system-x86_64
LINUX_SRC := $(BUILD)/linux-src
KSFT_HARNESS := $(LINUX_SRC)/tools/testing/selftests/kselftest_harness.h
CHECKPATCH := $(LINUX_SRC)/scripts/checkpatch.pl

DEPS_STAMP := $(BUILD)/.deps-installed
OUT_LIB := $(BUILD)/lib
OUT_BIN := $(BUILD)/bin
TESTDIR := $(BUILD)/tests
INITRAMFS := $(BUILD)/initramfs.cpio

# The debug guest kernel (KASAN, lockdep, kmemleak, ...), its nnp.ko and
# initramfs: `make check-debug`, `tools/nnp-vm --kernel debug`.
DEBUG_SYSROOT := $(BUILD)/debug-sysroot
DEBUG_KREL_FILE := $(DEBUG_SYSROOT)/kernel-release
DEBUG_MODDIR := $(BUILD)/debug-module
DEBUG_NNP_KO := $(DEBUG_MODDIR)/nnp.ko
DEBUG_INITRAMFS := $(BUILD)/initramfs-debug.cpio

# ---- sources ---------------------------------------------------------------
# The firmware simulator: a folder per layer (docs/architecture.md);
# tests/host/check-fw-layers.sh checks that calls between them go down.
FW_SRCS := $(wildcard firmware-sim/src/*/*.c)
FW_INC := -Ihw -Ifirmware-sim/include $(patsubst %/,-I%,$(wildcard firmware-sim/src/*/))
FW_HDRS := $(wildcard firmware-sim/include/*.h firmware-sim/src/*/*.h) hw/nnp_hw.h
# Its objects, compiled once for each way host programs link it: plain
# (the host tests, nnp-sim, the firmware benches), with ASan (the host
# tests of lifetimes) and instrumented for the fuzzers. Compiled into each
# program instead, a change to it was compiled again some 40 times.
FW_OBJS := $(patsubst firmware-sim/src/%.c,$(BUILD)/obj/fw/%.o,$(FW_SRCS))
FW_ASAN_OBJS := $(patsubst firmware-sim/src/%.c,$(BUILD)/obj/fw-asan/%.o,$(FW_SRCS))
FW_FUZZ_OBJS := $(patsubst firmware-sim/src/%.c,$(BUILD)/obj/fw-fuzz/%.o,$(FW_SRCS))
ASAN_CFLAGS := -fsanitize=address -fno-omit-frame-pointer
# Kept: only pattern rules name some of them, and make would delete those
# after each build, to compile them again on the next.
.SECONDARY: $(FW_OBJS) $(FW_ASAN_OBJS) $(FW_FUZZ_OBJS)
LIBNNP_SRCS := $(wildcard libnnp/src/*.c)
LIBNNP_HDRS := $(wildcard libnnp/include/nnp/*.h libnnp/src/*.h) uapi/drm/nnp_accel.h hw/nnp_hw.h
# nnptool builds in libnnp's names of the device's and driver's codes
# (libnnp/src/names.c, not exported by libnnp.so) for `nnptool coredump`.
NNPTOOL_SRCS := $(wildcard tools/nnptool/*.c) libnnp/src/names.c
NNPTOOL_HDRS := $(wildcard tools/nnptool/*.h) libnnp/src/names.h uapi/drm/nnp_accel.h \
	uapi/drm/nnp_coredump.h hw/nnp_hw.h
NNPTOOL_DEFS := -DNNPTOOL_VERSION=\"$(VERSION)\"
NNPTOOL_INC = -Ilibnnp/include -Ilibnnp/src -Iuapi/drm -Ihw $(DRM_CFLAGS) $(JSONC_CFLAGS)
DRIVER_SRCS := Kbuild $(wildcard driver/*.c driver/*.h) hw/nnp_hw.h uapi/drm/nnp_accel.h \
	uapi/drm/nnp_coredump.h
HOST_TESTS := $(patsubst tests/host/%.c,$(TESTDIR)/host/%,$(wildcard tests/host/test_*.c))
GUEST_C_TESTS := $(patsubst tests/guest/%.c,$(TESTDIR)/guest/%,$(wildcard tests/guest/*_test.c))

LIBNNP_SO := $(OUT_LIB)/libnnp.so.$(VERSION)
LIBNNP_A := $(OUT_LIB)/libnnp.a
NNPTOOL := $(OUT_BIN)/nnptool
NNP_SIM := $(OUT_BIN)/nnp-sim
NNP_SIM_SRCS := $(wildcard tools/nnp-sim/*.c)
NNP_KO := nnp.ko

PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: all deps qemu module userspace examples tests initramfs check check-fresh demo stress pod bench clean distclean checkpatch sparse install install-files install-dkms deb check-deb \
	uninstall uninstall-dkms check-host \
	reduce-bench debug-kernel debug-module debug-initramfs check-debug fuzz torch torch-suite torch-bench scaling \
	abi-baseline

all: qemu module userspace examples tests initramfs

# ---- dependencies: Debian packages, QEMU source, guest kernel ----------------
# Only a newcomer's goals install packages: the README's two commands
# (demo, check), bench, and deps itself. scripts/install-deps.sh says what
# it adds (an apt sources file, packages) before it adds it. Any other goal
# (make, install, install-dkms, ...) builds with what the machine has, so
# `make install` on a production host never changes its package sources;
# `deb` and `check-deb` install their own tools (scripts/install-deb-deps.sh).
#
# For those goals the stamp is a makefile that make includes: when it is
# missing or older than the script, make runs the script first and then
# starts over, reading this file again. So nothing evaluated while reading
# it ($(shell pkg-config ...), := assignments) ever sees the machine as it
# was before the packages went in. $(DEPS) is the stamp for those goals and
# nothing for the others: rules that need the packages name it order-only.
#
# NNP_DEPS=none: the caller has installed what the build needs (a Debian
# package build: debian/control's Build-Depends), run no apt.
# INSTALL_DEPS: the script (tests/host/check-deps-goals.sh swaps in its own).
DEPS_GOALS := deps demo check bench
INSTALL_DEPS := scripts/install-deps.sh
DEPS :=
ifneq ($(NNP_DEPS),none)
ifneq ($(filter $(DEPS_GOALS),$(MAKECMDGOALS)),)
DEPS := $(DEPS_STAMP)
include $(DEPS_STAMP)
else ifeq ($(wildcard $(DEPS_STAMP)),)
ifneq ($(filter-out clean distclean check-fresh deb check-deb,$(or $(MAKECMDGOALS),all)),)
$(info make: installs no packages for this goal; if a tool or library is missing, `make deps` adds it, saying what first)
endif
endif
endif

$(DEPS_STAMP): $(INSTALL_DEPS)
ifeq ($(NNP_DEPS),none)
	@:
else
	bash $(INSTALL_DEPS)
	@mkdir -p $(BUILD) && echo '# $(INSTALL_DEPS) ran' >$@
endif

deps: $(DEPS_STAMP)

$(KREL_FILE): scripts/fetch-kernel.sh | $(DEPS)
	bash scripts/fetch-kernel.sh $(SYSROOT)

# Cached in the machine's cache (/var/cache/nnp for root: every checkout
# shares it) by the hash of the fragment and the source's version; the
# script relinks $(DEBUG_SYSROOT) to a cached build when there is one.
$(DEBUG_KREL_FILE): scripts/build-debug-kernel.sh scripts/debug-kernel.config \
		/usr/src/linux-source-6.12.tar.xz | $(DEPS)
	bash scripts/build-debug-kernel.sh $(DEBUG_SYSROOT)

debug-kernel: $(DEBUG_KREL_FILE)

$(QEMU_SRC)/.nnp-fetched: scripts/fetch-qemu.sh | $(DEPS)
	bash scripts/fetch-qemu.sh $(QEMU_SRC)

$(KSFT_HARNESS): | $(DEPS)
	mkdir -p $(LINUX_SRC)
	tar -xf /usr/src/linux-source-6.12.tar.xz -C $(LINUX_SRC) --strip-components=1 \
		linux-source-6.12/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.12/tools/testing/selftests/kselftest.h \
		linux-source-6.12/scripts/checkpatch.pl \
		linux-source-6.12/scripts/spelling.txt \
		linux-source-6.12/scripts/const_structs.checkpatch
	touch $@

$(CHECKPATCH): $(KSFT_HARNESS)

# ---- QEMU with our device ----------------------------------------------------
# virtfs lets `nnp-vm --host-root` show the guest the host's root read-only.
# Of the devices only those our guests use (qemu-device/devices.mak), and
# no debug information, which costs a quarter of the compile time on a new
# machine: `make qemu QEMU_DEBUG_INFO=yes` builds with it, for gdb.
# A change here reconfigures from scratch (ccache keeps that cheap).
QEMU_DEBUG_INFO ?= no
QEMU_CONFIGURE_ARGS := --target-list=x86_64-softmmu \
	--without-default-features --enable-tcg --enable-kvm \
	--without-default-devices --with-devices-x86_64=nnp \
	--$(if $(filter yes,$(QEMU_DEBUG_INFO)),enable,disable)-debug-info \
	--enable-fdt=system --enable-attr --enable-virtfs --disable-docs \
	--disable-werror --disable-install-blobs --python=/usr/bin/python3 --cc="ccache gcc"

# ninja knows which of our sources changed, so it always gets a say.
# ccache sees paths relative to the checkout and no working directory, so
# a fresh clone of the same sources reuses another checkout's objects.
qemu: $(QEMU_SRC)/.nnp-fetched
	bash scripts/qemu-add-device.sh $(QEMU_SRC) $(ROOT)
	@if [ ! -f $(QEMU_BUILD)/build.ninja ] || \
	    [ "$$(cat $(QEMU_BUILD)/nnp-configure-args 2>/dev/null)" != '$(QEMU_CONFIGURE_ARGS)' ]; then \
		rm -rf $(QEMU_BUILD) && mkdir -p $(QEMU_BUILD) && cd $(QEMU_BUILD) && \
		$(ROOT)/$(QEMU_SRC)/configure $(QEMU_CONFIGURE_ARGS) \
			>configure.log 2>&1 || { tail -n 30 configure.log; exit 1; }; \
		echo '$(QEMU_CONFIGURE_ARGS)' >nnp-configure-args; \
	fi
	@echo "ninja -C $(QEMU_BUILD) qemu-system-x86_64 (log: $(QEMU_BUILD)/ninja.log)"
	@CCACHE_BASEDIR=$(ROOT) CCACHE_NOHASHDIR=1 \
		ninja -C $(QEMU_BUILD) qemu-system-x86_64 >$(QEMU_BUILD)/ninja.log 2>&1 || \
		{ tail -n 40 $(QEMU_BUILD)/ninja.log; exit 1; }

# ---- kernel module -----------------------------------------------------------
module: $(NNP_KO)

$(NNP_KO): $(DRIVER_SRCS) $(KREL_FILE)
	$(MAKE) -C $(KDIR) M=$(ROOT) modules

# The same sources built against the debug kernel, in a copy of their own:
# kbuild puts the objects beside the sources, where the stock build's are.
debug-module: $(DEBUG_NNP_KO)

$(DEBUG_NNP_KO): $(DRIVER_SRCS) $(DEBUG_KREL_FILE)
	rm -rf $(DEBUG_MODDIR) && mkdir -p $(DEBUG_MODDIR)
	cp --parents $(DRIVER_SRCS) $(DEBUG_MODDIR)/
	$(MAKE) -C $(DEBUG_SYSROOT)/build M=$(ROOT)/$(DEBUG_MODDIR) modules

# libnnp's ABI as libnnp/abi/SONAME.abi, the baseline host-libnnp-abi
# compares each build with: made again in the change that adds to the API.
abi-baseline: $(LIBNNP_SO)
	bash tests/host/check-libnnp-abi.sh --update

checkpatch: $(CHECKPATCH)
	perl $(CHECKPATCH) --strict --no-tree --terse -f driver/*.c driver/*.h \
		uapi/drm/nnp_accel.h uapi/drm/nnp_coredump.h hw/nnp_hw.h

# sparse (Debian's) over every driver file, built or not (C=2): endianness
# (__le32 fields of hw/nnp_hw.h), address spaces, locking annotations.
sparse: $(KREL_FILE)
	$(MAKE) -C $(KDIR) M=$(ROOT) C=2 CHECK=sparse modules

# ---- libnnp and nnptool ----------------------------------------------------
userspace: $(LIBNNP_SO) $(LIBNNP_A) $(NNPTOOL) $(NNP_SIM) $(OUT_LIB)/pkgconfig/nnp.pc

LIBNNP_CFLAGS := $(CFLAGS_COMMON) -Ilibnnp/include -Iuapi/drm -Ihw

$(BUILD)/obj/libnnp/%.o: libnnp/src/%.c $(LIBNNP_HDRS) | $(DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(LIBNNP_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(DRM_CFLAGS) -fPIC -c $< -o $@

LIBNNP_OBJS := $(patsubst libnnp/src/%.c,$(BUILD)/obj/libnnp/%.o,$(LIBNNP_SRCS))

$(LIBNNP_SO): $(LIBNNP_OBJS) libnnp/libnnp.map
	@mkdir -p $(OUT_LIB)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libnnp.so.$(SOVERSION) \
		-Wl,--version-script=libnnp/libnnp.map -Wl,-z,defs \
		-o $@ $(LIBNNP_OBJS) $(LIBNNP_LIBS)
	ln -sf libnnp.so.$(VERSION) $(OUT_LIB)/libnnp.so.$(SOVERSION)
	ln -sf libnnp.so.$(SOVERSION) $(OUT_LIB)/libnnp.so

$(LIBNNP_A): $(LIBNNP_OBJS)
	@mkdir -p $(OUT_LIB)
	rm -f $@ && ar rcs $@ $^

# nnp.pc for the install directories below.
PC_SUBST = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' libnnp/nnp.pc.in

$(OUT_LIB)/pkgconfig/nnp.pc: libnnp/nnp.pc.in Makefile
	@mkdir -p $(dir $@)
	$(PC_SUBST) >$@

# ---- install -------------------------------------------------------------
# `make install`: libnnp (shared, static, headers, nnp.pc), nnptool and the
# man pages. The driver's uapi header goes into a directory of our own,
# INCLUDEDIR/libnnp/drm/ (/usr/include/drm/ is linux-libc-dev's), and
# nnp.pc's Cflags name INCLUDEDIR/libnnp, so programs still include
# <drm/nnp_accel.h>, as libdrm's do <drm.h>.
# `make install-dkms`: the module's source and dkms.conf under /usr/src for
# DKMS, and the udev rule for its device nodes. `make uninstall` and
# `make uninstall-dkms` remove what they put (uninstall-dkms first has DKMS
# remove the module from every kernel it built it for). All honour DESTDIR;
# the directories are the usual variables. LIBDIR is Debian's multiarch
# directory (lib/x86_64-linux-gnu) where dpkg-architecture or the compiler
# names one: ld.so and pkg-config look there under /usr and /usr/local.
MULTIARCH ?= $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || $(CC) -print-multiarch)
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib$(if $(MULTIARCH),/$(MULTIARCH))
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
# Helpers run by other programs, not by users: Slurm's TaskProlog.
LIBEXECDIR ?= $(PREFIX)/libexec
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DKMSDIR ?= /usr/src/nnp-$(VERSION)
UDEVRULESDIR ?= /lib/udev/rules.d
MAN_PAGES := docs/man/nnptool.1 docs/man/libnnp.3

# nnptool as installed: found libnnp in LIBDIR, no rpath into the build tree.
NNPTOOL_INSTALL := $(BUILD)/install/nnptool

$(NNPTOOL_INSTALL): $(NNPTOOL_SRCS) $(NNPTOOL_HDRS) $(LIBNNP_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CPPFLAGS) $(CFLAGS) $(NNPTOOL_INC) $(NNPTOOL_DEFS) \
		-o $@ $(NNPTOOL_SRCS) $(LDFLAGS) -L$(OUT_LIB) -lnnp $(JSONC_LIBS) -lm

# What `make install` copies, built (debian/rules builds this first).
install-files: $(LIBNNP_SO) $(LIBNNP_A) $(NNPTOOL_INSTALL)

install: install-files
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(INCLUDEDIR)/nnp $(DESTDIR)$(INCLUDEDIR)/libnnp/drm \
		$(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(LIBEXECDIR)/nnp
	install -m 644 libnnp/include/nnp/*.h $(DESTDIR)$(INCLUDEDIR)/nnp/
	install -m 644 uapi/drm/nnp_accel.h uapi/drm/nnp_coredump.h $(DESTDIR)$(INCLUDEDIR)/libnnp/drm/
	install -m 644 $(LIBNNP_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libnnp.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libnnp.so.$(SOVERSION)
	ln -sf libnnp.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libnnp.so
	install -m 644 $(LIBNNP_A) $(DESTDIR)$(LIBDIR)/
	$(PC_SUBST) >$(DESTDIR)$(PKGCONFIGDIR)/nnp.pc
	install -m 755 $(NNPTOOL_INSTALL) $(DESTDIR)$(BINDIR)/
	install -m 644 docs/man/nnptool.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 docs/man/libnnp.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 755 tools/slurm/nnp-task-prolog $(DESTDIR)$(LIBEXECDIR)/nnp/

install-dkms:
	install -d $(DESTDIR)$(DKMSDIR) $(DESTDIR)$(UDEVRULESDIR)
	cp --parents $(DRIVER_SRCS) $(DESTDIR)$(DKMSDIR)/
	sed 's|#MODULE_VERSION#|$(VERSION)|' dkms.conf >$(DESTDIR)$(DKMSDIR)/dkms.conf
	install -m 644 udev/60-nnp.rules $(DESTDIR)$(UDEVRULESDIR)/

uninstall:
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/nnp/,$(notdir $(wildcard libnnp/include/nnp/*.h))) \
		$(DESTDIR)$(INCLUDEDIR)/libnnp/drm/nnp_accel.h \
		$(DESTDIR)$(INCLUDEDIR)/libnnp/drm/nnp_coredump.h \
		$(addprefix $(DESTDIR)$(LIBDIR)/,libnnp.so.$(VERSION) libnnp.so.$(SOVERSION) libnnp.so libnnp.a) \
		$(DESTDIR)$(PKGCONFIGDIR)/nnp.pc $(DESTDIR)$(BINDIR)/nnptool \
		$(DESTDIR)$(MANDIR)/man1/nnptool.1 $(DESTDIR)$(MANDIR)/man3/libnnp.3 \
		$(DESTDIR)$(LIBEXECDIR)/nnp/nnp-task-prolog
	-rmdir $(DESTDIR)$(INCLUDEDIR)/nnp $(DESTDIR)$(INCLUDEDIR)/libnnp/drm \
		$(DESTDIR)$(INCLUDEDIR)/libnnp $(DESTDIR)$(LIBEXECDIR)/nnp 2>/dev/null

# DKMS_ARGS: more dkms options (the tests' own --dkmstree and --sourcetree).
uninstall-dkms:
	if [ -z '$(DESTDIR)' ] && dkms status $(DKMS_ARGS) -m nnp -v $(VERSION) | grep -q .; then \
		dkms remove $(DKMS_ARGS) -m nnp -v $(VERSION) --all; fi
	rm -rf $(DESTDIR)$(DKMSDIR)
	rm -f $(DESTDIR)$(UDEVRULESDIR)/60-nnp.rules

$(NNPTOOL): $(NNPTOOL_SRCS) $(NNPTOOL_HDRS) $(LIBNNP_SO)
	@mkdir -p $(OUT_BIN)
	$(CC) $(CFLAGS_COMMON) $(NNPTOOL_INC) $(NNPTOOL_DEFS) -o $@ $(NNPTOOL_SRCS) \
		-L$(OUT_LIB) -lnnp $(JSONC_LIBS) -lm -Wl,-rpath,'$$ORIGIN/../lib'

# The firmware simulator's chips at scale, no QEMU (docs/nnp-sim.md).
# --replay reads traces with json-c and writes JSON as nnptool does.
$(NNP_SIM): $(NNP_SIM_SRCS) $(wildcard tools/nnp-sim/*.h) tools/nnptool/json_out.c tools/nnptool/text_out.c $(FW_OBJS) $(FW_HDRS) | $(DEPS)
	@mkdir -p $(OUT_BIN)
	$(CC) $(CFLAGS_COMMON) $(FW_INC) $(JSONC_CFLAGS) -Itools/nnptool -o $@ \
		$(NNP_SIM_SRCS) tools/nnptool/json_out.c tools/nnptool/text_out.c $(FW_OBJS) $(JSONC_LIBS) -lm

$(BUILD)/obj/fw/%.o: firmware-sim/src/%.c $(FW_HDRS) | $(DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(FW_INC) -c -o $@ $<

$(BUILD)/obj/fw-asan/%.o: firmware-sim/src/%.c $(FW_HDRS) | $(DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(ASAN_CFLAGS) $(FW_INC) -c -o $@ $<

# ---- MPI programs: the training example, the guest's MPI smoke test ----------
# Open MPI's compiler wrapper around $(CC). The example's loops are meant to
# be vectorized, which GCC does at -O3 (4x faster, and the same results).
MPICC := mpicc
DIST_MNIST := $(OUT_BIN)/dist_mnist_mlp
DIST_MNIST_SRCS := $(wildcard examples/dist_mnist_mlp/*.c)
MPI_TESTS := $(TESTDIR)/guest/mpi_hello $(TESTDIR)/guest/coll_mpi
# make bench's Open MPI collectives, run on the host and in the guest.
MPI_COLL := $(BUILD)/bench/mpi_coll
TRACE_JOB := $(TESTDIR)/guest/trace_job
DOORBELL_JOB := $(TESTDIR)/guest/doorbell_job
# A rank of a POD job, in the initramfs (tests/vm/pod_faults.sh).
POD_JOB := $(TESTDIR)/guest/pod_job
RING_ALLREDUCE := $(OUT_BIN)/ring_allreduce

examples: $(DIST_MNIST) $(RING_ALLREDUCE)

# Built as a user would (examples/ring_allreduce.c says how): the uapi
# header as <drm/nnp_accel.h>, as nnp.pc's Cflags find it once installed.
$(RING_ALLREDUCE): examples/ring_allreduce.c $(LIBNNP_SO) $(LIBNNP_HDRS)
	@mkdir -p $(OUT_BIN)
	$(CC) $(CFLAGS_COMMON) -Ilibnnp/include -Iuapi $(DRM_CFLAGS) -o $@ $< \
		-L$(OUT_LIB) -lnnp -Wl,-rpath,'$$ORIGIN/../lib'

$(DIST_MNIST): $(DIST_MNIST_SRCS) $(wildcard examples/dist_mnist_mlp/*.h) $(LIBNNP_SO) libnnp/include/nnp/nnp.h
	@mkdir -p $(OUT_BIN)
	$(MPICC) $(CFLAGS_COMMON) -O3 -Ilibnnp/include -o $@ $(DIST_MNIST_SRCS) \
		-L$(OUT_LIB) -lnnp -lz -lm -Wl,-rpath,'$$ORIGIN/../lib'

$(TESTDIR)/guest/mpi_hello: tests/guest/mpi_hello.c $(LIBNNP_SO) libnnp/include/nnp/nnp.h
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS_COMMON) -Ilibnnp/include -o $@ $< -L$(OUT_LIB) -lnnp

$(TESTDIR)/guest/coll_mpi: tests/guest/coll_mpi.c tools/nnptool/coll_data.h tests/guest/device_counters.h \
		$(LIBNNP_SO) $(LIBNNP_HDRS)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS_COMMON) -Ilibnnp/include -Iuapi/drm $(DRM_CFLAGS) -Itests/guest \
		-Itools/nnptool -o $@ $< -L$(OUT_LIB) -lnnp -lm

# The guest gets the first MNIST_TRAIN / MNIST_TEST images of Fashion-MNIST
# (2 MB instead of 30 MB in every boot's initramfs).
MNIST_TRAIN := 4096
MNIST_TEST := 1000
MNIST_DIR := $(BUILD)/data/fashion-mnist
MNIST_STAMP := $(BUILD)/data/fashion-mnist-$(MNIST_TRAIN)-$(MNIST_TEST).stamp

$(MNIST_STAMP): scripts/mnist-subset.sh | $(DEPS)
	rm -rf $(MNIST_DIR) $(BUILD)/data/fashion-mnist-*.stamp
	bash scripts/mnist-subset.sh /usr/share/datasets/fashion-mnist $(MNIST_DIR) \
		$(MNIST_TRAIN) $(MNIST_TEST)
	touch $@

# ---- the PyTorch backend: runtimes/torch/ (docs/torch.md) ---------------------
# `make torch` builds the torch_nnp package into build/torch (PYTHONPATH=build/torch
# then `import torch_nnp` registers the "nnp" backend; its egg-info there
# lets torch 2.6 import it by itself). Its own goal, not part
# of `all`: it needs Debian's torch, 1.36 GiB that scripts/install-torch-deps.sh
# installs (saying so first) for `make check` and `make bench`, the goals
# that run it; `make torch` alone builds with what the machine has.
TORCH_DEPS_STAMP := $(BUILD)/.torch-deps-installed
TORCH_DEPS := $(if $(DEPS),$(TORCH_DEPS_STAMP))
TORCH_OUT := $(BUILD)/torch
TORCH_SRCS := runtimes/torch/setup.py $(wildcard runtimes/torch/csrc/* runtimes/torch/torch_nnp/*.py)

$(TORCH_DEPS_STAMP): scripts/install-torch-deps.sh | $(DEPS)
	bash scripts/install-torch-deps.sh
	@mkdir -p $(BUILD) && touch $@

$(TORCH_OUT)/.built: $(TORCH_SRCS) $(LIBNNP_SO) libnnp/include/nnp/nnp.h | $(TORCH_DEPS)
	@/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "make torch: no torch for /usr/bin/python3:" \
		"bash scripts/install-torch-deps.sh installs Debian's (1.36 GiB), make check does too"; exit 1; }
	@mkdir -p $(TORCH_OUT)
	cd runtimes/torch && NNP_VERSION=$(VERSION) /usr/bin/python3 setup.py -q \
		egg_info --egg-base $(ROOT)/$(TORCH_OUT) \
		build --build-base $(ROOT)/$(BUILD)/torch-build --build-lib $(ROOT)/$(TORCH_OUT)
	touch $@

torch: $(TORCH_OUT)/.built

# ---- fuzzers (libFuzzer, ASan, UBSan): tests/fuzz/ ---------------------------
# The device model's inputs (user queue commands, admin commands, ICL
# packets, ICL socket frames), libnnp's ring planner and its rendezvous's
# messages. `make check` runs each for 10 s;
# `make fuzz FUZZ_TIME=SECONDS` for longer. The fuzzing host itself is not
# instrumented for coverage: only the code under test steers the fuzzer.
FUZZ := $(BUILD)/fuzz
FUZZ_TIME ?= 300
FUZZ_CC := clang
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_FW_INC := $(FW_INC) -Itests/fuzz
FUZZERS := $(FUZZ)/fuzz_queue $(FUZZ)/fuzz_admin $(FUZZ)/fuzz_icl \
	$(FUZZ)/fuzz_icl_frame $(FUZZ)/fuzz_ring_plan $(FUZZ)/fuzz_bootstrap

# The fuzzing host and the chip the ICL fuzzers share.
$(FUZZ)/%.o: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) $(FW_HDRS) | $(DEPS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_FW_INC) -c -o $@ $<

$(FUZZ)/fuzz_icl $(FUZZ)/fuzz_icl_frame: $(FUZZ)/fuzz_icl_chip.o
# Kept: made by a pattern rule, make would delete it after each build and
# so link every fuzzer again (minutes of clang with ASan) on the next.
.SECONDARY: $(FUZZ)/fuzz_dev.o

$(FUZZ)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ)/fuzz_dev.o $(FW_FUZZ_OBJS) $(FW_HDRS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_FW_INC) -o $@ $< \
		$(filter %.o,$^) -lm

# The firmware as the fuzzers see it: instrumented to steer them.
$(BUILD)/obj/fw-fuzz/%.o: firmware-sim/src/%.c $(FW_HDRS) | $(DEPS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(FW_INC) -c -o $@ $<

# The ring planner, and placement's search over the same tables.
FUZZ_PLAN_SRCS := libnnp/src/ring_plan.c libnnp/src/place_plan.c libnnp/src/log.c \
	libnnp/src/errors.c
$(FUZZ)/fuzz_ring_plan: tests/fuzz/fuzz_ring_plan.c $(FUZZ_PLAN_SRCS) $(LIBNNP_HDRS) | $(DEPS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Ilibnnp/include -Ilibnnp/src -Ihw -o $@ \
		$< $(FUZZ_PLAN_SRCS)

# What libnnp reads from a rendezvous root, its ranks and their tables.
FUZZ_BOOT_SRCS := libnnp/src/boot_msg.c libnnp/src/comm_plan.c \
	libnnp/src/ring_plan.c libnnp/src/log.c libnnp/src/errors.c
$(FUZZ)/fuzz_bootstrap: tests/fuzz/fuzz_bootstrap.c tests/fuzz/fuzz_stream.h $(FUZZ_BOOT_SRCS) \
		$(LIBNNP_HDRS) | $(DEPS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Ilibnnp/include -Ilibnnp/src -Ihw -o $@ \
		$< $(FUZZ_BOOT_SRCS) $(shell pkg-config --libs nettle)

fuzz: $(FUZZERS)
	bash tests/fuzz/run.sh $(FUZZ_TIME)

# ---- tests -------------------------------------------------------------------
tests: $(HOST_TESTS) $(GUEST_C_TESTS) $(MPI_TESTS) $(FUZZERS) $(TRACE_JOB) $(DOORBELL_JOB) $(POD_JOB)

# trace_job and doorbell_job run from the checkout (tests/vm/trace.sh and
# doorbell.sh boot with --host-root), pod_job from the initramfs.
$(TRACE_JOB) $(DOORBELL_JOB) $(POD_JOB): $(TESTDIR)/guest/%: tests/guest/%.c $(LIBNNP_SO) libnnp/include/nnp/nnp.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Ilibnnp/include -o $@ $< -L$(OUT_LIB) -lnnp

# A host test of the firmware: its source, the harness, the ring's wiring
# if it takes it (below), and the firmware's objects ($(1): their flags).
define link_fw_test
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(1) $(FW_INC) -Itests/host \
		-o $@ $< tests/host/fw_harness.c $(filter tests/host/fw_ring.c %.o,$^) -lcmocka -lm
endef
FW_HOST_TEST_DEPS := tests/host/fw_harness.c tests/host/fw_harness.h tests/lib/reduce_ref.h $(FW_HDRS)

$(TESTDIR)/host/test_fw_%: tests/host/test_fw_%.c $(FW_HOST_TEST_DEPS) $(FW_OBJS) | $(DEPS)
	$(call link_fw_test)

# The tests on a ring of in-process chips share its wiring.
$(TESTDIR)/host/test_fw_relay $(TESTDIR)/host/test_fw_group $(TESTDIR)/host/test_fw_mismatch \
		$(TESTDIR)/host/test_fw_fuse \
		$(TESTDIR)/host/test_fw_transit $(TESTDIR)/host/test_fw_recv_any \
		$(TESTDIR)/host/test_fw_leave_routed: \
	tests/host/fw_ring.c tests/host/fw_ring.h

# Host tests on nnp-sim's chips (its host, wiring and topologies).
NNP_SIM_HOST_SRCS := tools/nnp-sim/sim.c tools/nnp-sim/topo.c tools/nnp-sim/sweep.c
$(TESTDIR)/host/test_sim_%: tests/host/test_sim_%.c $(NNP_SIM_HOST_SRCS) $(wildcard tools/nnp-sim/*.h) $(FW_OBJS) $(FW_HDRS) | $(DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(FW_INC) -Itools/nnp-sim \
		-o $@ $< $(NNP_SIM_HOST_SRCS) $(FW_OBJS) -lcmocka -lm
# nnp-sim --replay: its trace reader and timeline too, over json-c.
NNP_SIM_REPLAY_SRCS := $(filter-out tools/nnp-sim/main.c tools/nnp-sim/report.c,$(NNP_SIM_SRCS)) \
	tools/nnptool/json_out.c tools/nnptool/text_out.c
$(TESTDIR)/host/test_sim_replay: tests/host/test_sim_replay.c $(NNP_SIM_REPLAY_SRCS) $(wildcard tools/nnp-sim/*.h) $(FW_OBJS) $(FW_HDRS) | $(DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(FW_INC) $(JSONC_CFLAGS) -Itools/nnp-sim -Itools/nnptool \
		-o $@ $< $(NNP_SIM_REPLAY_SRCS) $(FW_OBJS) $(JSONC_LIBS) -lcmocka -lm
# A use after free between chips, or a read of memory no longer lent,
# must abort the test, not pass unseen.
FW_ASAN_TESTS := $(TESTDIR)/host/test_fw_lifetime $(TESTDIR)/host/test_fw_lend $(TESTDIR)/host/test_fw_buffers
$(FW_ASAN_TESTS): $(TESTDIR)/host/%: tests/host/%.c $(FW_HOST_TEST_DEPS) $(FW_ASAN_OBJS) | $(DEPS)
	$(call link_fw_test,$(ASAN_CFLAGS))

# nnptool's JSON and terminal text writers alone.
$(TESTDIR)/host/test_nnptool_%: tests/host/test_nnptool_%.c tools/nnptool/json_out.c \
		tools/nnptool/json_out.h tools/nnptool/text_out.c tools/nnptool/text_out.h | $(DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(JSONC_CFLAGS) -Itools/nnptool -o $@ $< tools/nnptool/json_out.c \
		tools/nnptool/text_out.c $(JSONC_LIBS) -lcmocka

# nnptool coredump: its decoder and sysfs walk in process, and the built
# nnptool on files; through sysfs.c and common.c it links libnnp. A read
# past a hostile dump must abort the test, not pass unseen or hang.
NNPTOOL_COREDUMP_SRCS := $(addprefix tools/nnptool/,coredump.c coredump_cmd.c options.c \
	sysfs.c common.c json_out.c text_out.c) libnnp/src/names.c
$(TESTDIR)/host/test_nnptool_coredump: tests/host/test_nnptool_coredump.c $(NNPTOOL_COREDUMP_SRCS) \
		$(NNPTOOL_HDRS) $(NNPTOOL) | $(DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -fsanitize=address -fno-omit-frame-pointer $(NNPTOOL_INC) -Itools/nnptool \
		-o $@ $< $(NNPTOOL_COREDUMP_SRCS) -L$(OUT_LIB) -lnnp $(JSONC_LIBS) -lcmocka \
		-Wl,-rpath,'$$ORIGIN/../../lib'

# test_libnnp_job runs nnptool job against its in-process job.
$(TESTDIR)/host/test_libnnp_job: $(NNPTOOL)

$(TESTDIR)/host/test_libnnp_%: tests/host/test_libnnp_%.c $(LIBNNP_A) $(LIBNNP_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -DNNP_MAKE_VERSION='"$(VERSION)"' -Ilibnnp/include -Ilibnnp/src -Ihw -Iuapi/drm $(DRM_CFLAGS) -o $@ $< $(LIBNNP_A) $(LIBNNP_LIBS) -lcmocka

# Guest tests use the kernel's kselftest harness: GNU C (statement
# expressions), and its macros compare mixed signedness, leave a fixture
# parameter unused and keep a local across its setjmp, which -Wextra would
# reject in every test.
GUEST_CFLAGS := $(subst -std=c11,-std=gnu11,$(CFLAGS_COMMON)) -Ihw \
	-Wno-sign-compare -Wno-unused-parameter -Wno-clobbered \
	-I$(LINUX_SRC)/tools/testing/selftests -Ilibnnp/include -Iuapi/drm $(DRM_CFLAGS)

$(TESTDIR)/guest/%_test: tests/guest/%_test.c tests/guest/guest_env.h tools/nnptool/coll_data.h \
		tests/guest/device_counters.h tests/guest/ring_ranks.h \
		tests/guest/fail_nth.h tests/guest/pci_bind.h tests/guest/all_devices.h \
		tests/guest/tagged_sums.h \
		$(KSFT_HARNESS) $(LIBNNP_SO) $(LIBNNP_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -Itests/guest -Itools/nnptool -o $@ $< -L$(OUT_LIB) -lnnp \
		$(DRM_LIBS) -lm

# ---- benchmarks (not tests: make check does not run them) ------------------
# The firmware's reduction kernels against the scalar loop they replaced and
# host memcpy, at -O2 (QEMU's level) like the host tests.
REDUCE_BENCH := $(BUILD)/bench/reduce_bench

$(REDUCE_BENCH): tests/bench/reduce_bench.c tests/lib/reduce_ref.h firmware-sim/src/base/fw_reduce.c firmware-sim/src/base/fw_reduce.h hw/nnp_hw.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Ihw -Ifirmware-sim/src/base -o $@ $< firmware-sim/src/base/fw_reduce.c -lm

reduce-bench: $(REDUCE_BENCH)
	$(REDUCE_BENCH)

# ---- guest initramfs ----------------------------------------------------------
initramfs: $(INITRAMFS)

# What either initramfs holds besides the kernel's modules and nnp.ko.
INITRAMFS_DEPS := scripts/mkinitramfs.sh scripts/guest-init.sh scripts/nnp-load scripts/nnp-demo \
	scripts/guest-openmpi-mca-params.conf scripts/guest-openmpi5-mca-params.conf \
	scripts/guest-prte-mca-params.conf \
	$(wildcard tests/guest/*.sh) tests/lib/tap.sh $(NNPTOOL) $(LIBNNP_SO) \
	$(GUEST_C_TESTS) $(MPI_TESTS) $(POD_JOB) $(DIST_MNIST) $(RING_ALLREDUCE) $(MNIST_STAMP) \
	$(MPI_COLL) udev/60-nnp.rules
INITRAMFS_ARGS = $(OUT_LIB) $(NNPTOOL) \
	--bin $(DIST_MNIST) --bin $(RING_ALLREDUCE) --bin $(MPI_COLL) \
	--bin /bin/udevadm --bin /usr/bin/setpriv --data udev/60-nnp.rules /usr/lib/udev/rules.d \
	--data $(MNIST_DIR) /usr/share/nnp \
	$(GUEST_C_TESTS) $(MPI_TESTS) $(POD_JOB) $(wildcard tests/guest/*.sh) tests/lib/tap.sh

$(INITRAMFS): $(INITRAMFS_DEPS) $(NNP_KO) $(KREL_FILE)
	bash scripts/mkinitramfs.sh $@ $(SYSROOT) $(NNP_KO) $(INITRAMFS_ARGS)

debug-initramfs: $(DEBUG_INITRAMFS)

$(DEBUG_INITRAMFS): $(INITRAMFS_DEPS) $(DEBUG_NNP_KO) $(DEBUG_KREL_FILE)
	bash scripts/mkinitramfs.sh $@ $(DEBUG_SYSROOT) $(DEBUG_NNP_KO) $(INITRAMFS_ARGS)

# ---- the two README commands ------------------------------------------------
# SUITES: shell patterns of the suites to run (tests/run-tests.sh), all if
# empty: `make check SUITES="guest vm-icl*"`.
SUITES ?=

# Both commands build first with a job per core: make on its own runs one
# job at a time, and the build before them is minutes of compiling (a
# fresh clone's on 2 cores: about 6 minutes serially, under 3 so).
BUILD_JOBS ?= $(shell nproc)

# The host's CMocka suites alone: what a package build runs (debian/rules).
check-host: $(HOST_TESTS)
	bash tests/run-tests.sh 'host-test_*'

# Torch's packages first: the sub-make's goals (all torch) install none.
check: | $(TORCH_DEPS)
	$(MAKE) -j$(BUILD_JOBS) all torch
	bash tests/run-tests.sh $(SUITES)

# torch's own suite with gloo run again on the host, not taken from the
# results tests/vm/torch-suite-gloo/ stores for the host's torch: fails if
# gloo's passes moved (tests/vm/torch_dist_suite.sh, docs/torch.md).
torch-suite: all torch
	NNP_TORCH_SUITE_GLOO=run bash tests/run-tests.sh vm-torch_dist_suite

# The guest suite and every VM scenario on the debug kernel: any KASAN,
# lockdep, kmemleak, UBSAN, WARN or BUG report fails the run. CI runs the
# guest suite only (.ci/run): all of it would not fit CI's time.
check-debug: qemu $(DEBUG_INITRAMFS)
	NNP_VM_KERNEL=debug bash tests/run-tests.sh $(SUITES)

demo:
	$(MAKE) -j$(BUILD_JOBS) all
	tools/nnp-vm --chips 4 --fabric ring --mem-size 64M -- nnp-demo

# The POD at full size, not part of check: 16 chips in 4 QEMUs, failures
# across chassis, a link flapped under 256 MiB allreduces (tests/pod/run.sh).
pod: all
	bash tests/pod/run.sh

# A soak run, not part of check: COUNT random faults with recovery, and
# COUNT loops of kill -9 with unbind/rebind and rmmod/reload (docs/testing.md).
COUNT ?= 10
stress: all
	bash tests/stress/run.sh $(COUNT)

# ---- benchmarks: not tests, not part of check -----------------------------
# One run of tests/bench/run.sh: the host's roofline, memcpy and Open MPI
# natively, then the devices in one VM per ring size, then torch's backends
# nnp and gloo in one VM; tables on stdout,
# $(BENCH)/results.json and $(BENCH)/busbw.png. Only the plot needs a
# package more than the build: gnuplot, installed here, not for everyone.
BENCH := $(BUILD)/bench
BENCH_DEPS_STAMP := $(BENCH)/.deps-installed

$(BENCH_DEPS_STAMP): tests/bench/install-deps.sh | $(DEPS)
	bash tests/bench/install-deps.sh
	@mkdir -p $(BENCH) && touch $@

$(BENCH)/host_bw: tests/bench/host_bw.c | $(DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -pthread -o $@ $<

# Open MPI's side of the comparison, on the host and (in the initramfs) in
# the guest beside the devices.
$(MPI_COLL): tests/bench/mpi_coll.c | $(DEPS)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS_COMMON) -o $@ $<

# The check of the ranks' calls, on and off, in the firmware alone: the
# host tests' ring of in-process chips.
$(BENCH)/call_check_fw: tests/bench/call_check_fw.c tests/bench/fw_timing.h tests/host/fw_harness.c tests/host/fw_ring.c \
		tests/host/fw_harness.h tests/host/fw_ring.h $(FW_OBJS) $(FW_HDRS) | $(DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(FW_INC) -Itests/host -o $@ $< tests/host/fw_harness.c \
		tests/host/fw_ring.c $(FW_OBJS) -lcmocka -lm

# Issue 44's G1 in the firmware alone: a GROUP of 31 8-byte allreduces
# against one, on the same ring.
$(BENCH)/group_fw: tests/bench/group_fw.c tests/bench/fw_timing.h tests/host/fw_harness.c \
		tests/host/fw_ring.c tests/host/fw_harness.h tests/host/fw_ring.h $(FW_OBJS) $(FW_HDRS) | $(DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(FW_INC) -Itests/host -o $@ $< tests/host/fw_harness.c \
		tests/host/fw_ring.c $(FW_OBJS) -lcmocka -lm

bench: all torch $(BENCH_DEPS_STAMP) $(BENCH)/host_bw $(MPI_COLL) $(BENCH)/call_check_fw $(BENCH)/group_fw
	bash tests/bench/run.sh

# make bench's torch.distributed part alone, into $(BUILD)/bench-torch: how
# torch 2.6 is measured, run in a Debian 13 root (docs/torch.md, Benchmark).
torch-bench: all torch
	rm -rf $(BUILD)/bench-torch && mkdir -p $(BUILD)/bench-torch/raw
	uptime >$(BUILD)/bench-torch/raw/load-start.txt
	bash tests/bench/torch_run.sh $(BUILD)/bench-torch/raw $$(numfmt --from=iec $(or $(NNP_BENCH_MAX),64M))
	uptime >$(BUILD)/bench-torch/raw/load-end.txt
	python3 tests/bench/report_torch.py $(BUILD)/bench-torch

# The example's training recorded on 4 chips and projected on 1 to 1024
# (docs/trace.md): a table, and $(BUILD)/scaling/scaling.png with gnuplot.
scaling: all torch
	bash tests/bench/scaling.sh

# ---- Debian packages -------------------------------------------------------
# nnp-dkms, libnnp0, libnnp-dev, nnptool and python3-torch-nnp from debian/, built by
# dpkg-buildpackage in a copy of the checkout's files, into $(DEB_DIR).
# check-deb: lintian, then the packages installed in a clean Debian 12
# root, where the module builds by DKMS and the examples by pkg-config.
DEB_DIR := $(BUILD)/deb

deb:
	bash scripts/build-deb.sh $(DEB_DIR)

check-deb: deb $(KREL_FILE)
	bash scripts/check-deb.sh $(DEB_DIR)

# Both commands above, from a clean clone in a clean Debian root:
# Debian 12 by default, Debian 13 with DIST=trixie.
check-fresh:
	DIST=$(DIST) bash scripts/check-fresh.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(ROOT) clean 2>/dev/null
	rm -rf $(BUILD)/obj $(BUILD)/install $(OUT_LIB) $(OUT_BIN) $(TESTDIR) $(BUILD)/data $(INITRAMFS) \
		$(BENCH)/host_bw $(MPI_COLL) $(DEBUG_MODDIR) $(DEBUG_INITRAMFS) \
		$(FUZZERS) $(FUZZ)/fuzz_dev.o $(TORCH_OUT) $(BUILD)/torch-build

distclean: clean
	rm -rf $(BUILD)
