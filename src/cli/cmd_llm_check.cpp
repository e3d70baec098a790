#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.h"
#include "cli/fail.h"
#include "cli/llm_options.h"
#include "cli/parse.h"
#include "util/strings.h"

namespace kopt::cli {

// `kopt llm-check`: what `--generator llm` will meet, in seconds: the URL, the key, the model, one short reply.
int cmd_llm_check(const Args& args) {
  CLI::App app{"kopt llm-check: check an OpenAI-compatible endpoint (URL, key, model) with one short request",
               "kopt llm-check"};
  search::LlmOptions o;
  o.timeout_s = 120;
  o.max_tokens = 64;
  add_llm_options(app, o, false);
  app.footer("Example: KOPT_LLM_API_KEY=... kopt llm-check --llm-url http://127.0.0.1:8000/v1 --llm-model my-model");
  if (auto rc = parse_args(app, args); rc) return *rc;
  if (auto rc = check_llm_endpoint("kopt llm-check", o); rc) return *rc;
  auto gen = search::make_llm_generator(o, false, nullptr);
  if (!gen) {
    return report_failure("llm-check", gen.error());
  }
  search::ChatCall call;
  auto reply = (*gen)->client().complete(
      {{"system", "You check that an endpoint works. Answer with one word."}, {"user", "Reply with the single word: ready"}},
      &call);
  if (!reply) {
    return report_failure("llm-check", reply.error());
  }
  std::string said = util::trim((*gen)->client().redact(reply->content));
  if (said.size() > 80) said = said.substr(0, 80) + "...";
  std::printf("%s\n", fmt::format("kopt llm-check: {} at {} answered \"{}\" in {:.2f} s ({} HTTP attempt(s); tokens: {})",
                                  reply->model.empty() ? o.model : reply->model, (*gen)->client().endpoint().url, said,
                                  call.wall_ms / 1000, call.attempts.size(),
                                  reply->usage.reported ? fmt::format("{} in, {} out", reply->usage.prompt_tokens,
                                                                      reply->usage.completion_tokens)
                                                        : std::string("not reported"))
                          .c_str());
  return 0;
}

}  // namespace kopt::cli
