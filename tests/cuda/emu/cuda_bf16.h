/* cuda_bf16.h (host emulation): see cuda_runtime_api.h. */
#include "cuda_runtime.h"
