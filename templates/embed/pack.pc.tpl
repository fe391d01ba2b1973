# $(banner)
# pkg-config file of kernel pack $(N).  In place (after `make` here):
#   PKG_CONFIG_PATH=<this folder> pkg-config --cflags --libs $(N)
# `make install` writes a copy whose paths point into the installed tree.
prefix=${pcfiledir}
includedir=${prefix}
libdir=${prefix}
@ if cuda then
# CUDA variants (device pointers, a stream): link this object and -lcudart
cuda_object=${libdir}/$(N)_cuda.o
@ end

Name: $(N)
Description: kgen kernel pack $(N) ($(ops); $(dtypes); $(isas))
Version: $(version)
Cflags: -I${includedir}
Libs: -L${libdir} -l$(N) -lm
