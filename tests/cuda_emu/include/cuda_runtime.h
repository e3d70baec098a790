#pragma once
// cuda_emu stand-in for <cuda_runtime.h>: everything lives in cuda_emu.h.
#include "../cuda_emu.h"
