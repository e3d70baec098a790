#pragma once
// Running cuobjdump on a library or cubin (side effect, through util::CommandRunner).
#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"
#include "sass/listing.h"
#include "util/process.h"

namespace kopt::sass {

struct DumpOptions {
  std::string cuobjdump;   // empty: toolchain::find_cuobjdump()
  double timeout_s = 120;
};

// `cuobjdump --dump-sass FILE`, parsed. A file without device code gives an empty list. Errors (exit code
// kGate): cuobjdump not found, or it failed; the message names what to fix.
Result<std::vector<SassFunction>> dump_sass(const std::filesystem::path& binary, util::CommandRunner& runner,
                                            const DumpOptions& opts = {});
// `cuobjdump --dump-resource-usage FILE`: the raw text (parse it with compile::parse_cuobjdump_resource_usage).
Result<std::string> dump_resource_usage(const std::filesystem::path& binary, util::CommandRunner& runner,
                                        const DumpOptions& opts = {});

}  // namespace kopt::sass
