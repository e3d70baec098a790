// kopt annotate KERNEL: the search space kopt derives from a kernel nobody annotated (search/derive.h), printed
// as @kopt lines with their reasons; --write OUT writes the annotated, instrumented copy. No GPU needed.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "cli/fail.h"
#include "cli/output_options.h"
#include "cli/parse.h"
#include "search/derive.h"
#include "util/fs.h"
#include "util/input_file.h"
#include "util/json_io.h"
#include "util/output.h"

namespace kopt::cli {

namespace fs = std::filesystem;

int cmd_annotate(const Args& args) {
  CLI::App app{"kopt annotate: derive a search space from a kernel without @kopt annotations (docs/ANNOTATIONS.md)",
               "kopt annotate"};
  std::string kernel, write, json;
  app.add_option("kernel", kernel, "the kernel: .cu (CUDA) or .py (Triton)")->required();
  app.add_option("--write", write, "write the annotated copy here (never over the kernel itself)");
  add_json_option(app, json, "the derivation");
  if (auto rc = parse_args(app, args); rc) return *rc;

  auto fail = [](const Error& e) { return report_failure("annotate", e); };
  auto text = util::read_text_file(kernel, "kernel file");
  if (!text) return fail(text.error());
  auto d = search::derive(*text, kernel, search::local_includes(kernel, *text));
  if (!d) return fail(d.error());

  std::error_code ec;
  if (!write.empty() && fs::exists(write) && fs::equivalent(write, kernel, ec))
    return fail(input_error("--write " + write + " is the kernel itself: kopt never rewrites your file; give another path"));
  bool json_stdout = json == "-";
  FILE* out = json_stdout ? stderr : stdout;
  if (d->annotated) {
    std::fprintf(out, "%s", search::annotation_text(*d).c_str());
    if (!write.empty()) std::fprintf(stderr, "kopt annotate: %s already has @kopt lines; nothing written to %s\n", kernel.c_str(), write.c_str());
  } else if (d->empty()) {
    std::fprintf(out, "kopt annotate: nothing to derive in %s (no named constant, literal or launcher-computed block, "
                      "launcher helper argument, template argument, grid-stride grid, #pragma unroll, __launch_bounds__ or "
                      "Triton launch keyword kopt can tune; the notes below say what was seen and left alone)\n%s",
                 kernel.c_str(), search::annotation_text(*d).c_str());
  } else {
    std::fprintf(out, "%s", search::annotation_text(*d).c_str());
    if (!write.empty()) {
      if (auto st = util::write_file_atomic(write, d->instrumented); !st) return fail(st.error());
      std::fprintf(stderr, "kopt annotate: wrote the annotated copy of %s to %s (%zu parameters, %zu constraints)\n",
                   kernel.c_str(), write.c_str(), d->params.size(), d->constraints.size());
    }
  }
  if (auto st = util::write_json_output(json, "annotate", search::to_json(*d)); !st) return fail(st.error());
  return 0;
}

}  // namespace kopt::cli
