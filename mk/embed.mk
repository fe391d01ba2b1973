# embed.mk: packs from Hugging Face configs, packs embedded in
# ahead-of-time builds, and installing kgen.
#   install        make install PREFIX=/usr/local [DESTDIR=...]:
#                    PREFIX/bin/kgen, PREFIX/share/kgen/{gen,templates,runtime},
#                    PREFIX/include/kgen/ (runtime headers),
#                    PREFIX/lib/pkgconfig/kgen.pc, PREFIX/share/man/man1/kgen.1
#   uninstall      removes exactly that
#   test-hf        tests/hf/run.sh: config.json mapping and errors, --emit-spec
#                  round trip, the shipped specs, luajit = lua5.4 bytes
#   test-embed     tests/hf/pack.sh: a pack copied out of the checkout builds
#                  with its Makefile (cc, clang, no nvcc), links with -lm
#                  only, pkg-config in place and installed
#   test-install   tests/hf/install.sh: make install into a temp prefix, the
#                  installed kgen run from elsewhere
#   test-examples  examples/: the ahead-of-time build (vendored Qwen3 pack,
#                  the engine's flags, qk_norm on a fused QKV buffer against
#                  float64) and the pkg-config build of two packs

PREFIX ?= /usr/local
KG_DEST = $(abspath $(DESTDIR)$(PREFIX))
KG_SHARE = $(KG_DEST)/share/kgen

.PHONY: install uninstall kg-check-prefix test-hf test-embed test-install test-examples

# Why: refuse an empty PREFIX (uninstall removes folders under it).
kg-check-prefix:
	@test -n "$(strip $(PREFIX))" || { echo "make install: PREFIX is empty" >&2; exit 2; }

# Why: the installed generator finds its Lua modules, templates and runtime
# under PREFIX/share/kgen (gen/kgen's installed layout); kgen.pc tells build
# systems where they are; kgen.1 is `kgen --help` as a man page.
install: kg-check-prefix
	mkdir -p $(KG_DEST)/bin $(KG_SHARE) $(KG_DEST)/include/kgen \
	  $(KG_DEST)/lib/pkgconfig $(KG_DEST)/share/man/man1
	install -m 755 gen/kgen $(KG_DEST)/bin/kgen
	set -e; for f in $$(find gen -name '*.lua' | LC_ALL=C sort) \
	    $$(find templates -name '*.tpl' | LC_ALL=C sort) runtime/*.c runtime/*.h; do \
	  install -D -m 644 $$f $(KG_SHARE)/$$f; \
	done
	install -m 644 runtime/*.h $(KG_DEST)/include/kgen/
	v=$$($(KGEN) --version | sed 's/^kgen //'); \
	printf '%s\n' "# kgen.pc: the kgen generator and its runtime headers" \
	  "prefix=$(abspath $(PREFIX))" 'bindir=$${prefix}/bin' 'includedir=$${prefix}/include/kgen' \
	  'datadir=$${prefix}/share/kgen' 'kgen=$${bindir}/kgen' 'templatesdir=$${datadir}/templates' \
	  'runtimedir=$${datadir}/runtime' '' 'Name: kgen' \
	  'Description: kernel compiler for RMSNorm, QK-norm and LayerNorm (generator and runtime headers)' \
	  "Version: $$v" 'Cflags: -I$${includedir}' >$(KG_DEST)/lib/pkgconfig/kgen.pc
	v=$$($(KGEN) --version | sed 's/^kgen //'); \
	{ printf '%s\n' ".TH KGEN 1 \"\" \"kgen $$v\" \"User Commands\"" '.SH NAME' \
	    'kgen \- generate specialized normalization kernels (C, per ISA) from a spec' \
	    '.SH DESCRIPTION' '.nf'; \
	  $(KGEN) --help | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; \
	  printf '%s\n' '.fi' '.SH FILES' \
	    "$(abspath $(PREFIX))/share/kgen: the generator's Lua modules, templates and runtime" \
	    '.SH SEE ALSO' 'pkg-config(1): pkg-config --variable=kgen kgen'; \
	} >$(KG_DEST)/share/man/man1/kgen.1
	@echo "kgen: installed into $(KG_DEST) (needs luajit or lua5.4, lua-penlight, lua-argparse, lua-dkjson, lua-filesystem)"

uninstall: kg-check-prefix
	rm -f $(KG_DEST)/bin/kgen $(KG_DEST)/lib/pkgconfig/kgen.pc $(KG_DEST)/share/man/man1/kgen.1
	rm -rf $(KG_SHARE) $(KG_DEST)/include/kgen

test-hf:
	bash tests/hf/run.sh

test-embed:
	bash tests/hf/pack.sh

test-install:
	bash tests/hf/install.sh

test-examples:
	$(MAKE) --no-print-directory -C examples KGEN=$(abspath $(KGEN)) \
	  KGEN_DEPS="$(abspath $(GEN_DEPS))" CC="$(CC)" run

CLEAN_FILES += examples/build
TEST_TARGETS += test-hf test-embed test-install test-examples
