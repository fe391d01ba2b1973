# $(banner)
# Makefile of kernel pack $(N).  `make` builds lib$(N).a from the C files in
# this folder with your compiler and flags (CC, CFLAGS; default cc -O2).  No
# file needs a flag of its own: ISA code carries its own target attributes,
# and files for another architecture compile to nothing.  Needs nothing
# outside this folder; programs link with -l$(N) -lm.
@ if cuda then
# $(N)_cuda.o is built too when nvcc is found (NVCC, NVCCFLAGS); without
# it the CPU library is built alone.
@ end
#   make                          lib$(N).a (CC=clang CFLAGS="-O3 -fPIC" ...)
#   make install PREFIX=/opt/x    lib/, include/$(N)/, lib/pkgconfig/$(N).pc (DESTDIR too)
#   make uninstall PREFIX=/opt/x  removes exactly what install wrote
#   make clean                    removes what make built
# $(N).pc works in place as well: PKG_CONFIG_PATH=<this folder>.

NAME := $(N)
CC ?= cc
CFLAGS ?= -O2
AR ?= ar
PREFIX ?= /usr/local
@ if cuda then
NVCC ?= nvcc
NVCCFLAGS ?= -O2 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90
@ end

SRCS := ${sort ${wildcard *.c}}
HDRS := ${sort ${wildcard *.h}}
OBJS := ${SRCS:.c=.o}

.PHONY: all install uninstall clean
.DELETE_ON_ERROR:

@ if cuda then
HAVE_NVCC := ${shell command -v ${firstword ${NVCC}} 2>/dev/null}
ifneq (${HAVE_NVCC},)
all: lib${NAME}.a ${NAME}_cuda.o
else
all: lib${NAME}.a
	@echo "${NAME}: nvcc not found: ${NAME}_cuda.cu not built (the CPU library is complete)"
endif
@ else
all: lib${NAME}.a
@ end

lib${NAME}.a: ${OBJS}
	rm -f $@
	${AR} rcs $@ ${OBJS}

%.o: %.c ${HDRS}
	${CC} ${CPPFLAGS} ${CFLAGS} -c $< -o $@

@ if cuda then
${NAME}_cuda.o: ${NAME}_cuda.cu ${HDRS}
	${NVCC} ${NVCCFLAGS} -c $< -o $@

@ end
# The installed $(N).pc finds its files relative to itself (pcfiledir), so
# the installed tree can be moved as a whole.
install: all
	mkdir -p ${DESTDIR}${PREFIX}/lib/pkgconfig ${DESTDIR}${PREFIX}/include/${NAME}
	cp lib${NAME}.a ${DESTDIR}${PREFIX}/lib/
	cp ${HDRS} ${DESTDIR}${PREFIX}/include/${NAME}/
@ if cuda then
	if [ -f ${NAME}_cuda.o ]; then cp ${NAME}_cuda.o ${DESTDIR}${PREFIX}/lib/; fi
@ end
	sed -e 's|^prefix=.*|prefix=$${pcfiledir}/../..|' \
	    -e 's|^includedir=.*|includedir=$${prefix}/include/${NAME}|' \
	    -e 's|^libdir=.*|libdir=$${prefix}/lib|' \
	    ${NAME}.pc > ${DESTDIR}${PREFIX}/lib/pkgconfig/${NAME}.pc

uninstall:
	rm -f ${DESTDIR}${PREFIX}/lib/lib${NAME}.a ${DESTDIR}${PREFIX}/lib/pkgconfig/${NAME}.pc
@ if cuda then
	rm -f ${DESTDIR}${PREFIX}/lib/${NAME}_cuda.o
@ end
	rm -f ${addprefix ${DESTDIR}${PREFIX}/include/${NAME}/,${HDRS}}
	-rmdir ${DESTDIR}${PREFIX}/include/${NAME} 2>/dev/null

clean:
	rm -f ${OBJS} lib${NAME}.a
@ if cuda then
	rm -f ${NAME}_cuda.o
@ end
