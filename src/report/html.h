#pragma once
// summary.html: one self-contained page (Chart.js, the page's script and style, and the run's data inline;
// nothing is fetched when it is viewed). Written by every optimize run and by `kopt report --html RUN`.
#include <filesystem>
#include <string>

#include "core/result.h"
#include "report/assets.h"
#include "util/json_io.h"

namespace kopt::report {

// The page for `data` (load_run's document). Pure. Text that would end an inline <script> early ("</") is
// escaped; invalid UTF-8 in the data is replaced, never fatal.
std::string render_html(const util::Json& data, const PageAssets& assets = page_assets());

// Reads RUN_DIR (load_run) and writes RUN_DIR/summary.html atomically. Returns its path. For the optimize loop
// to call when a run ends (finished, stopped at a gate, or interrupted): it never changes anything else.
Result<std::filesystem::path> write_html(const std::filesystem::path& run_dir);

}  // namespace kopt::report
