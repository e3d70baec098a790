#include "search/llm_generator.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

#include "search/external_generator.h"
#include "search/llm_reply.h"
#include "search/llm_usage.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/process.h"
#include "util/strings.h"

namespace kopt::search {

namespace fs = std::filesystem;
using util::Json;

Status validate(const LlmOptions& o) {
  if (o.url.empty()) return input_error("--generator llm needs --llm-url, the endpoint's base URL (e.g. http://127.0.0.1:8000/v1)");
  if (auto st = util::check_http_url(o.url); !st) return input_error("--llm-url: " + st.error().message);
  if (o.model.empty()) return input_error("--generator llm needs --llm-model, the model's name as the endpoint serves it");
  if (!(o.temperature >= 0 && o.temperature <= 2)) return input_error(fmt::format("--llm-temperature {} must be within [0, 2]", o.temperature));
  if (!(o.timeout_s > 0)) return input_error("--llm-timeout-s must be > 0");
  if (o.max_tokens < 1) return input_error("--llm-max-tokens must be >= 1");
  if (o.concurrency < 1) return input_error("--llm-concurrency must be >= 1");
  if (o.repairs < 0) return input_error("--llm-repairs must be >= 0");
  return ok_status();
}

util::Json to_json(const LlmOptions& o) {
  return {{"url", o.url}, {"model", o.model}, {"key_env", o.key_env}, {"temperature", o.temperature},
          {"timeout_s", o.timeout_s}, {"max_tokens", o.max_tokens}, {"concurrency", o.concurrency},
          {"repairs", o.repairs}, {"require_guards", o.require_guards}};
}

Result<LlmOptions> llm_options_from_json(const util::Json& j) {
  LlmOptions o;
  if (j.is_null()) return o;
  try {
    o.url = j.value("url", std::string());
    o.model = j.value("model", std::string());
    o.key_env = j.value("key_env", std::string());
    o.temperature = j.value("temperature", o.temperature);
    o.timeout_s = j.value("timeout_s", o.timeout_s);
    o.max_tokens = j.value("max_tokens", o.max_tokens);
    o.concurrency = j.value("concurrency", o.concurrency);
    o.repairs = j.value("repairs", o.repairs);
    o.require_guards = j.value("require_guards", o.require_guards);
  } catch (const std::exception& e) {
    return input_error(std::string("options.json: the llm options are malformed: ") + e.what());
  }
  return o;
}

std::string llm_system_prompt(SourceLanguage lang) {
  const bool py = lang == SourceLanguage::kPython;
  return fmt::format(
      "You are an expert {} performance engineer working with kopt, a tool that measures every candidate you write: "
      "it compiles it, checks its results against a reference on several seeds, times it, switches each method you "
      "claim off to measure what it is worth, and looks for the method's signature in the SASS. Write complete, "
      "correct, compilable code that keeps the entry point exactly as it is. Answer only in the format you are asked "
      "for: fenced code blocks that name their file, and one JSON manifest block.",
      py ? "Triton" : "CUDA");
}

std::string llm_task_prompt(const std::string& brief_markdown, int n, int k, const std::string& file,
                            const std::string& focus, SourceLanguage lang) {
  const bool py = lang == SourceLanguage::kPython;
  std::string focus_text =
      focus.empty() ? std::string(" that you expect to be faster than the champion")
                    : fmt::format(" that applies the method `{}` first (its evidence is above); add other listed methods only "
                                  "where they help", focus);
  return fmt::format(
      "{}\n\n## Your task: candidate {} of {}\n"
      "kopt asks {} separate conversations for one candidate each; this is conversation {}. Start from the champion's "
      "source above and write ONE new variant{}. The rules above apply, except that you do not write files yourself: "
      "kopt writes the source and the manifest from your reply.\n\n"
      "Answer with, first, at most three sentences on what you change and why; then one fenced code block holding the "
      "complete source of `{}`, opened with ```{} file={}; then one fenced JSON block with its manifest entry:\n\n"
      "```json\n{{\"candidates\": [{{\"file\": \"{}\", \"methods\": [\"<registry ids of the methods it really implements>\"], "
      "\"params\": {{}}, \"flags\": []}}]}}\n```\n\n"
      "Guard every method you apply with {} as the rules say, and claim only what you implement.\n",
      brief_markdown, n, k, k, n, focus_text, file, py ? "python" : "cuda", file, file,
      py ? "`if KOPT_<ID>:` (a tl.constexpr flag)" : "`#if KOPT_<ID>` ... `#else` ... `#endif`");
}

std::string llm_repair_prompt(const std::string& file, const std::string& what_failed, const std::string& details,
                              SourceLanguage lang) {
  return fmt::format(
      "Your candidate `{}` {}:\n\n```\n{}\n```\n\n"
      "Fix it. Answer as before: the complete corrected source in one ```{} file={} block, then the JSON manifest block. "
      "Keep the entry point's declaration and the KOPT_<ID> guards.\n",
      file, what_failed, details, lang == SourceLanguage::kPython ? "python" : "cuda", file);
}

namespace {

constexpr size_t kMaxDetails = 8000;

std::string clip(std::string s) {
  if (s.size() <= kMaxDetails) return s;
  return s.substr(0, kMaxDetails) + fmt::format("\n[... {} more characters cut]", s.size() - kMaxDetails);
}

std::string what_failed(CandidateStatus s) {
  switch (s) {
    case CandidateStatus::kCompileFailed: return "did not compile";
    case CandidateStatus::kIncorrect: return "compiled, but its results disagree with the reference";
    case CandidateStatus::kCrashed: return "crashed when run (a fault, an abort or a CUDA error)";
    case CandidateStatus::kTimedOut: return "ran past its time limit";
    case CandidateStatus::kOk: break;
  }
  return "failed";
}

std::optional<CandidateStatus> parse_candidate_status(const std::string& s) {
  for (auto st : {CandidateStatus::kOk, CandidateStatus::kCompileFailed, CandidateStatus::kIncorrect,
                  CandidateStatus::kCrashed, CandidateStatus::kTimedOut})
    if (candidate_status_name(st) == s) return st;
  return std::nullopt;
}

// Everything the conversations of one iteration share.
struct Shared {
  const GeneratorInput* in = nullptr;
  const BriefFiles* brief = nullptr;
  const ChatClient* client = nullptr;
  const LlmOptions* opts = nullptr;
  std::string brief_hash;
  std::mutex check_mutex;  // checks come one at a time (CandidateChecker's contract)
  std::mutex error_mutex;
  std::atomic<bool> abort{false};
  std::optional<Error> error;  // the first failure: the endpoint's, or a record that could not be written
  // Records are part of the result: one that cannot be written stops the iteration like a failed endpoint.
  bool keep(const Status& st) {
    if (!st) fail(internal_error("cannot write the language model's record: " + st.error().message));
    return st.ok();
  }
  void fail(Error e) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!error) error = std::move(e);
    abort = true;
  }
};

enum class ConversationStatus { kAccepted, kFailed, kNoCandidate, kError };
std::string_view status_name(ConversationStatus s) {
  switch (s) {
    case ConversationStatus::kAccepted: return "accepted";
    case ConversationStatus::kFailed: return "failed";
    case ConversationStatus::kNoCandidate: return "no_candidate";
    case ConversationStatus::kError: return "error";
  }
  return "?";
}

struct Conversation {
  int n = 1;
  std::string file;   // v<n>.cu
  std::string focus;  // a method id, or ""
  fs::path dir;       // <iteration>/llm/c<n>
  ConversationStatus status = ConversationStatus::kNoCandidate;
  std::optional<Candidate> candidate;  // accepted: to measure
  std::optional<Measurement> failure;  // failed its last check
  Json entry;                          // the manifest entry of the last valid candidate (file relative to the iteration)
  Json requests = Json::array();
  int repairs = 0;
  bool finished = false;  // ran to its end (accepted, failed or no candidate), not cut by an error or Ctrl-C
  bool reused = false;
  std::string note;
};

// One manifest entry, validated as the external protocol validates it (read_manifest with k = 1).
Result<Candidate> validate_entry(const Json& entry, const BriefFiles& b) {
  ManifestContext ctx = b.manifest;
  ctx.k = 1;
  auto read = read_manifest(Json{{"candidates", Json::array({entry})}}, ctx);
  if (!read) {
    std::string m = read.error().message;
    const std::string prefix = "manifest candidate 1: ";
    if (m.rfind(prefix, 0) == 0) m = m.substr(prefix.size());
    return input_error(m);
  }
  if (read->candidates.empty()) return input_error("the manifest entry yields no candidate");
  return read->candidates.front();
}

// A conversation's record, so a resumed run of this iteration reuses a finished one instead of asking again,
// and keeps the requests an unfinished one already made (they were spent).
void save_result(const Conversation& c, Shared& s) {
  Json j = {{"status", status_name(c.status)}, {"finished", c.finished}, {"brief_hash", s.brief_hash}, {"entry", c.entry},
            {"requests", c.requests}, {"repairs", c.repairs}, {"note", c.note}};
  if (c.failure) j["check_status"] = candidate_status_name(c.failure->status);
  s.keep(util::write_json_atomic(c.dir / "result.json", "llm_conversation", j));
}

// Reads an earlier run's record of this conversation: its requests are kept (marked reused); a finished
// conversation with the same brief and options is taken as it ended. True when nothing is left to ask.
bool reuse(Conversation& c, const Shared& s) {
  auto j = util::read_json(c.dir / "result.json");
  if (!j) return false;
  for (auto r : j->value("requests", Json::array())) {
    r["reused"] = true;
    c.requests.push_back(std::move(r));
  }
  if (!j->value("finished", false) || j->value("brief_hash", std::string()) != s.brief_hash) return false;
  std::string st = j->value("status", std::string());
  c.repairs = j->value("repairs", 0);
  c.reused = true;
  c.finished = true;
  c.note = j->value("note", std::string());
  if (st == "no_candidate") {
    c.status = ConversationStatus::kNoCandidate;
    return true;
  }
  auto cand = validate_entry(j->value("entry", Json()), *s.brief);
  auto status = parse_candidate_status(j->value("check_status", std::string()));
  if (!cand || (st != "accepted" && (st != "failed" || !status))) {
    c.reused = c.finished = false;
    c.repairs = 0;
    c.note.clear();
    return false;
  }
  c.entry = (*j)["entry"];
  if (st == "accepted") {
    c.status = ConversationStatus::kAccepted;
    c.candidate = std::move(cand).value();
  } else {
    c.status = ConversationStatus::kFailed;
    c.failure = Measurement{*cand, *status, std::nullopt, s.in->iteration};
  }
  return true;
}

void run_conversation(Conversation& c, Shared& s) {
  const GeneratorInput& in = *s.in;
  const BriefFiles& b = *s.brief;
  const SourceLanguage lang = b.language;
  std::error_code ec;
  fs::create_directories(c.dir, ec);
  if (reuse(c, s)) return;
  std::vector<ChatMessage> messages = {
      {"system", llm_system_prompt(lang)},
      {"user", llm_task_prompt(b.markdown, c.n, in.k, c.file, c.focus, lang)}};
  std::string last_problem;
  for (int attempt = 0; attempt <= s.opts->repairs; ++attempt) {
    if (s.abort || util::interrupted()) return;
    const fs::path adir = c.dir / fmt::format("a{}", attempt);
    fs::create_directories(adir, ec);
    Json request = {{"messages", Json::array()}, {"model", s.opts->model}, {"temperature", s.opts->temperature},
                    {"max_tokens", s.opts->max_tokens}};
    for (const auto& m : messages) request["messages"].push_back({{"role", m.role}, {"content", m.content}});
    if (!s.keep(util::write_json_atomic(adir / "request.json", "llm_request", request))) return;

    ChatCall call;
    auto reply = s.client->complete(messages, &call);
    Json rec = {{"conversation", c.n}, {"attempt", attempt}, {"kind", attempt == 0 ? "initial" : "repair"},
                {"http_attempts", call.attempts.size()},
                {"retries", call.attempts.empty() ? 0 : static_cast<int>(call.attempts.size()) - 1},
                {"wall_ms", call.wall_ms}, {"usage_reported", call.usage.reported},
                {"prompt_tokens", call.usage.prompt_tokens}, {"completion_tokens", call.usage.completion_tokens}};
    Json call_json = to_json(call);
    if (!reply) {
      rec["outcome"] = "error";
      c.requests.push_back(rec);
      s.keep(util::write_json_atomic(adir / "call.json", "llm_call", call_json));
      c.status = ConversationStatus::kError;
      c.note = reply.error().message;
      s.fail(reply.error());
      return;
    }
    rec["finish_reason"] = reply->finish_reason;
    call_json["finish_reason"] = reply->finish_reason;
    call_json["model"] = reply->model;
    if (!s.keep(util::write_json_atomic(adir / "call.json", "llm_call", call_json)) ||
        !s.keep(util::write_file_atomic(adir / "reply.md", s.client->redact(reply->content))))
      return;

    // Read the reply: the manifest entry for this conversation's file (or its first entry) and its code block.
    ParsedReply parsed = parse_reply(reply->content, lang);
    std::string problem, failed_what;
    Json entry;
    if (!parsed.manifest || (*parsed.manifest)["candidates"].empty()) {
      problem = "the reply has no manifest block (a fenced JSON block {\"candidates\": [{\"file\": ...}]})";
    } else {
      const Json& list = (*parsed.manifest)["candidates"];
      entry = list[0];
      for (const auto& e : list)
        if (e.is_object() && e.value("file", std::string()) == c.file) entry = e;
      if (!entry.is_object() || !entry.value("file", Json()).is_string()) {
        problem = "the manifest entry must be an object {\"file\": ..., \"methods\": [...]}";
      } else {
        std::string name = entry["file"].get<std::string>();
        const ReplyFile* f = nullptr;
        for (const auto& rf : parsed.files)
          if (rf.name == name) f = &rf;
        if (!valid_candidate_file_name(name, lang)) {
          problem = fmt::format("the manifest names '{}': a candidate file must have a plain name such as {}", name, c.file);
        } else if (!f) {
          problem = fmt::format("the manifest names '{}' but no code block holds it", name);
        } else {
          if (!s.keep(util::write_file_atomic(adir / name, f->text))) return;
          entry["file"] = fs::relative(adir / name, b.dir).string();
        }
      }
    }
    if (!problem.empty() && !parsed.problems.empty()) problem += "; also: " + util::join(parsed.problems, "; ");
    std::optional<Candidate> cand;
    if (problem.empty()) {
      auto v = validate_entry(entry, b);
      if (v) cand = std::move(v).value();
      else problem = v.error().message;
    }
    std::optional<CheckFeedback> feedback;
    if (cand) {
      c.entry = entry;
      if (in.checker) {
        cand->id = fmt::format("i{}llm{}a{}", in.iteration, c.n, attempt);
        Result<CheckFeedback> fb = internal_error("not checked");
        {
          std::lock_guard<std::mutex> lock(s.check_mutex);
          fb = in.checker->check(*cand);
        }
        if (!fb) {
          if (fb.error().code == ExitCode::kInterrupted || util::interrupted()) return;
          c.note = "the check could not run (" + fb.error().message + "); passed on unchecked";
        } else {
          feedback = *fb;
        }
        s.keep(util::write_json_atomic(adir / "check.json", "llm_check",
                                       feedback ? Json{{"status", candidate_status_name(feedback->status)}, {"details", feedback->details}}
                                                : Json{{"status", "not_checked"}, {"details", c.note}}));
      }
      if (!feedback || feedback->status == CandidateStatus::kOk) {
        rec["outcome"] = "accepted";
        c.requests.push_back(rec);
        c.status = ConversationStatus::kAccepted;
        c.candidate = std::move(cand);
        c.candidate->id.clear();
        c.failure.reset();
        c.finished = true;
        return;
      }
      rec["outcome"] = std::string(candidate_status_name(feedback->status));
      c.status = ConversationStatus::kFailed;
      c.failure = Measurement{*cand, feedback->status, std::nullopt, in.iteration};
      failed_what = what_failed(feedback->status);
      problem = feedback->details.empty() ? std::string(describe(feedback->status)) : feedback->details;
    } else {
      rec["outcome"] = "rejected";
      s.keep(util::write_json_atomic(adir / "check.json", "llm_check", {{"status", "rejected"}, {"details", problem}}));
      failed_what = "was rejected by kopt before compiling";
    }
    c.requests.push_back(rec);
    last_problem = failed_what + ": " + problem.substr(0, 300);
    if (attempt == s.opts->repairs) break;
    ++c.repairs;
    messages.push_back({"assistant", reply->content});
    messages.push_back({"user", llm_repair_prompt(c.file, failed_what, clip(problem), lang)});
  }
  c.note = fmt::format("no passing candidate after {} repair(s): {}", c.repairs, last_problem);
  c.finished = true;
}

}  // namespace

LlmGenerator::LlmGenerator(LlmOptions o, ApiKey key, util::HttpClient& http, RetryPolicy retry)
    : o_(std::move(o)),
      client_(ChatEndpoint{o_.url, o_.model, key.env_name, o_.temperature, o_.timeout_s, o_.max_tokens}, key, http, retry) {}

std::string LlmGenerator::name() const { return fmt::format("llm: {} at {}", o_.model, client_.endpoint().url); }

Result<GeneratorOutput> LlmGenerator::generate(const GeneratorInput& in) {
  auto t0 = std::chrono::steady_clock::now();
  KOPT_TRY_ASSIGN(BriefFiles b, write_brief_files(in, "manifest.json", o_.require_guards));
  Shared s;
  s.in = &in;
  s.brief = &b;
  s.client = &client_;
  s.opts = &o_;
  // What a reply depends on: a resumed iteration reuses a finished conversation only when these are unchanged.
  s.brief_hash = util::content_hash(fmt::format("{}\n{}\n{}\n{}\n{}", b.markdown, o_.model, o_.temperature, o_.max_tokens,
                                                o_.require_guards));

  const std::string ext = b.language == SourceLanguage::kPython ? ".py" : ".cu";
  std::vector<Conversation> convs(static_cast<size_t>(std::max(0, in.k)));
  for (size_t i = 0; i < convs.size(); ++i) {
    Conversation& c = convs[i];
    c.n = static_cast<int>(i) + 1;
    c.file = fmt::format("v{}{}", c.n, ext);
    if (!b.selection.picks.empty()) c.focus = b.selection.picks[i % b.selection.picks.size()].id;
    c.dir = b.dir / "llm" / fmt::format("c{}", c.n);
  }
  // At most `concurrency` conversations in flight; each worker takes the next one until none is left.
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < convs.size(); i = next++) run_conversation(convs[i], s);
  };
  size_t workers = std::min(convs.size(), static_cast<size_t>(std::max(1, o_.concurrency)));
  std::vector<std::thread> pool;
  for (size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  if (workers > 0) work();
  for (auto& t : pool) t.join();

  // The record: every request, every conversation, the totals (llm_usage.h reads it for the summary).
  Json requests = Json::array(), conversations = Json::array();
  for (const auto& c : convs) {
    for (const auto& r : c.requests) requests.push_back(r);
    conversations.push_back({{"conversation", c.n}, {"status", status_name(c.status)}, {"repairs", c.repairs},
                             {"reused", c.reused}, {"focus", c.focus}, {"note", c.note},
                             {"file", c.entry.is_object() ? c.entry.value("file", std::string()) : std::string()}});
    save_result(c, s);
  }
  double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Json usage = {{"endpoint", {{"url", client_.endpoint().url}, {"model", o_.model}, {"key_env", client_.endpoint().key_env}}},
                {"iteration", in.iteration}, {"k", in.k}, {"concurrency", o_.concurrency}, {"repairs_allowed", o_.repairs},
                {"requests", requests}, {"conversations", conversations}};
  usage["totals"] = llm_usage_totals(usage);
  usage["totals"]["generate_wall_s"] = wall_s;
  KOPT_TRY(util::write_json_atomic(b.dir / "llm_usage.json", "llm_usage", usage));

  if (util::interrupted()) return Error{ExitCode::kInterrupted, "interrupted while the language model was writing candidates"};
  if (s.error) {
    Error e = *s.error;
    e.message = client_.redact(e.message + fmt::format(" (requests and replies so far: {})", (b.dir / "llm").string()));
    return e;
  }

  GeneratorOutput read;
  std::vector<Measurement> failures;
  for (auto& c : convs) {
    if (!c.note.empty()) read.notes.push_back(fmt::format("llm conversation {}: {}", c.n, c.note));
    if (c.status == ConversationStatus::kAccepted && c.candidate) read.candidates.push_back(*c.candidate);
    if (c.status == ConversationStatus::kFailed && c.failure) {
      c.failure->candidate.id = fmt::format("i{}llm{}", in.iteration, c.n);
      failures.push_back(*c.failure);
    }
  }
  GeneratorOutput out = accept_candidates(in, std::move(read), std::move(b.selection));
  out.checked_failures = std::move(failures);
  const Json& t = usage["totals"];
  out.notes.push_back(fmt::format("llm: {} request(s), {} repair request(s), {} candidate(s) accepted, {} failed; tokens "
                                  "{} in, {} out; {:.1f} s",
                                  t.value("requests", 0), t.value("repair_requests", 0), out.candidates.size(),
                                  out.checked_failures.size(), t.value("prompt_tokens", int64_t{0}),
                                  t.value("completion_tokens", int64_t{0}), wall_s));
  return out;
}

Result<std::unique_ptr<LlmGenerator>> make_llm_generator(const LlmOptions& o, bool preflight, std::vector<std::string>* warnings) {
  KOPT_TRY(validate(o));
  KOPT_TRY_ASSIGN(ApiKey key, api_key_from_env(o.key_env));
  KOPT_TRY_ASSIGN(util::HttpClient* http, util::curl_client());
  auto gen = std::make_unique<LlmGenerator>(o, key, *http);
  if (preflight) KOPT_TRY(gen->client().preflight(warnings));
  return gen;
}

}  // namespace kopt::search
