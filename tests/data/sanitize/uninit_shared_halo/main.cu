// Standalone form of kernel.cu for compute-sanitizer without kopt (see ../README.md).
#include "kernel.cu"
#include "../common_main.h"
