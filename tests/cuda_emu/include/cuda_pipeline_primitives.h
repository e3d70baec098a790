#pragma once
// cuda_emu stand-in for <cuda_pipeline_primitives.h>: everything lives in cuda_emu.h.
#include "../cuda_emu.h"
