#pragma once
// cuda_emu stand-in for <device_launch_parameters.h>: everything lives in cuda_emu.h.
#include "../cuda_emu.h"
