#pragma once
// cuda_emu stand-in for <cuda.h>: everything lives in cuda_emu.h.
#include "../cuda_emu.h"
