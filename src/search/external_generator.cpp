#include "search/external_generator.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "search/brief.h"
#include "search/selection.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::search {

namespace fs = std::filesystem;
using util::Json;

namespace {

// Flags that would redirect or replace kopt's own compile step.
bool forbidden_flag(const std::string& f) {
  static const std::set<std::string> kExact = {"-o", "--output-file", "-odir", "--output-directory", "-E", "--preprocess",
                                               "-M", "-MM", "-MD", "-MMD", "-MF", "-MT", "--run", "-run", "-lib", "--lib",
                                               "-shared", "--shared", "-c", "--compile", "-ccbin", "--compiler-bindir",
                                               "-dryrun", "--dryrun", "-keep", "--keep", "-keep-dir", "--keep-dir"};
  std::string head = f.substr(0, f.find('='));
  return kExact.count(head) > 0;
}

std::string tail(const std::string& s, size_t n) { return s.size() <= n ? s : "..." + s.substr(s.size() - n); }

}  // namespace

Result<GeneratorOutput> read_manifest(const Json& manifest, const ManifestContext& ctx) {
  if (!manifest.is_object() || !manifest.contains("candidates") || !manifest["candidates"].is_array())
    return input_error("manifest: expected an object {\"candidates\": [...]}");
  if (!ctx.registry) return internal_error("read_manifest needs the registry");
  const Json& list = manifest["candidates"];
  if (list.empty()) return input_error("manifest: the candidate list is empty");
  std::error_code ec;
  fs::path dir = fs::canonical(ctx.iteration_dir, ec);
  if (ec) return input_error(fmt::format("iteration directory {}: {}", ctx.iteration_dir.string(), ec.message()));
  const bool python = ctx.language == SourceLanguage::kPython;

  GeneratorOutput out;
  for (size_t i = 0; i < list.size(); ++i) {
    if (out.candidates.size() == static_cast<size_t>(ctx.k)) {
      out.notes.push_back(fmt::format("manifest lists {} candidates; kept the first {}", list.size(), ctx.k));
      break;
    }
    const Json& e = list[i];
    auto bad = [&](const std::string& what) { return input_error(fmt::format("manifest candidate {}: {}", i + 1, what)); };
    if (!e.is_object()) return bad("must be an object {file, methods, params, flags}");
    for (auto it = e.begin(); it != e.end(); ++it)
      if (it.key() != "file" && it.key() != "methods" && it.key() != "params" && it.key() != "flags")
        return bad(fmt::format("unknown key '{}' (file, methods, params, flags)", it.key()));
    if (!e.contains("file") || !e["file"].is_string() || e["file"].get<std::string>().empty())
      return bad("'file' must name the candidate's source file");

    // The file must resolve (symlinks and .. included) to a regular file inside the iteration directory.
    std::string file = e["file"].get<std::string>();
    fs::path p = fs::path(file).is_absolute() ? fs::path(file) : dir / file;
    fs::path real = fs::canonical(p, ec);
    if (ec) return bad(fmt::format("file '{}' does not exist", file));
    fs::path rel = real.lexically_relative(dir);
    if (rel.empty() || *rel.begin() == ".." || rel.is_absolute())
      return bad(fmt::format("file '{}' resolves to {}, outside the iteration directory {}", file, real.string(), dir.string()));
    if (!fs::is_regular_file(real, ec)) return bad(fmt::format("file '{}' is not a regular file", file));
    if (language_of(real.string()) != ctx.language)
      return bad(fmt::format("file '{}' is not a {} source like the champion", file, python ? "Python (.py)" : "CUDA"));
    auto text = util::read_file(real);
    if (!text) return bad(text.error().message);

    auto sig = extract_entry_signature(text.value(), ctx.language);
    if (!sig) return bad(fmt::format("file '{}' has no {}", file, python ? "def run_kernel(...)" : "extern \"C\" ... solve(...)"));
    if (*sig != ctx.signature)
      return bad(fmt::format("file '{}' changed the entry point's signature:\n  expected: {}\n  found:    {}", file,
                             ctx.signature, *sig));

    Candidate c;
    c.source = real;
    c.origin = "external";
    std::set<std::string> claimed;
    if (e.contains("methods")) {
      if (!e["methods"].is_array()) return bad("'methods' must be a list of method ids");
      for (const auto& m : e["methods"]) {
        if (!m.is_string()) return bad("'methods' must be a list of method ids");
        std::string id = m.get<std::string>();
        const Method* method = ctx.registry->find(id);
        if (!method) return bad(fmt::format("unknown method '{}' (kopt methods lists the registry)", id));
        if (!method->supports(ctx.backend))
          return bad(fmt::format("method '{}' does not apply to {} kernels", id, backend_name(ctx.backend)));
        claimed.insert(id);
      }
    }
    // Guards the source carries without claiming them (inherited from the champion) keep the champion's value.
    for (const auto& m : ctx.registry->methods()) {
      if (claimed.count(m.id) || !guard_in_conditional(text.value(), guard_macro(m.id), ctx.language)) continue;
      auto it = ctx.champion_guards.find(m.id);
      if (it != ctx.champion_guards.end() && it->second) {
        claimed.insert(m.id);
      } else {
        c.guards[m.id] = false;
        if (python) c.constexprs[guard_macro(m.id)] = 0;
        else c.defines[guard_macro(m.id)] = "0";
      }
    }
    for (const auto& id : claimed) {
      const std::string guard = guard_macro(id);
      if (guard_in_conditional(text.value(), guard, ctx.language)) {
        c.guards[id] = true;
        if (python) c.constexprs[guard] = 1;
        else c.defines[guard] = "1";
      } else if (const Method* m = ctx.registry->find(id); m && m->is_flag_method()) {
        c.guards[id] = true;  // a flag method is toggled by its flags, not by a guard
      } else if (ctx.require_guards) {
        return bad(fmt::format("method '{}' is claimed but {} never appears in {} of '{}'", id, guard,
                               python ? "an if statement" : "an #if/#ifdef/#elif", file));
      } else {
        c.not_ablatable.push_back(id);
        out.notes.push_back(fmt::format("manifest candidate {}: method '{}' has no {} conditional: recorded as not ablatable",
                                        i + 1, id, guard));
      }
      c.methods.push_back(id);
    }

    if (e.contains("params")) {
      if (!e["params"].is_object()) return bad("'params' must be an object of NAME: integer");
      for (auto it = e["params"].begin(); it != e["params"].end(); ++it) {
        const std::string& name = it.key();
        if (!util::is_identifier(name) || util::starts_with(name, "KOPT_"))
          return bad(fmt::format("param name '{}' must be an identifier not starting with KOPT_", name));
        if (!it.value().is_number_integer()) return bad(fmt::format("param '{}' must be an integer", name));
        int64_t v = it.value().get<int64_t>();
        c.params[name] = v;
        if (!python) c.defines[name] = std::to_string(v);
        else if (name == "num_warps" || name == "num_stages") c.launch[name] = v;
        else c.constexprs[name] = v;
      }
    }
    if (e.contains("flags")) {
      if (!e["flags"].is_array()) return bad("'flags' must be a list of strings");
      if (python && !e["flags"].empty()) return bad("'flags' are nvcc flags; a Triton candidate has none");
      for (const auto& f : e["flags"]) {
        if (!f.is_string() || f.get<std::string>().empty()) return bad("'flags' must be a list of non-empty strings");
        std::string flag = f.get<std::string>();
        if (forbidden_flag(flag)) return bad(fmt::format("flag '{}' would take over kopt's own compile step", flag));
        c.flags.push_back(flag);
      }
    }
    c.content_hash = candidate_hash(text.value(), c);
    out.candidates.push_back(std::move(c));
  }
  return out;
}

Result<BriefFiles> write_brief_files(const GeneratorInput& in, const std::string& manifest_name, bool require_guards) {
  if (!in.registry) return internal_error("a brief needs the registry");
  std::error_code ec;
  fs::create_directories(in.iteration_dir, ec);
  if (ec) return internal_error(fmt::format("cannot create {}: {}", in.iteration_dir.string(), ec.message()));
  BriefFiles b;
  b.dir = fs::canonical(in.iteration_dir);

  const fs::path champion_path = in.champion ? in.champion->candidate.source : in.baseline_source;
  KOPT_TRY_ASSIGN(b.champion_text, util::read_file(champion_path));
  b.language = language_of(champion_path.string());
  auto signature = extract_entry_signature(b.champion_text, b.language);
  if (!signature)
    return input_error(fmt::format("{}: no {} found to hold candidates to", champion_path.string(),
                                   b.language == SourceLanguage::kPython ? "def run_kernel(...)" : "extern \"C\" ... solve(...)"));

  // This iteration's methods: any registry method for the backend, by evidence and budget.
  SelectionInput sel = selection_input(in);
  for (const auto& m : in.registry->methods())
    if (m.supports(in.backend)) sel.offered.push_back(m.id);
  if (in.champion)
    for (const auto& id : in.champion->candidate.methods) sel.active.insert(id);
  b.selection = select_methods(sel);

  const std::string champion_copy = std::string("champion") + (b.language == SourceLanguage::kPython ? ".py" : ".cu");
  KOPT_TRY(util::write_file_atomic(b.dir / champion_copy, b.champion_text));
  BriefInput bi;
  bi.generator = &in;
  bi.selection = b.selection;
  bi.champion_source_text = b.champion_text;
  bi.champion_file = (b.dir / champion_copy).string();
  bi.signature = *signature;
  bi.manifest_name = manifest_name;
  b.brief = make_brief(bi);
  if (!in.context.contract_signature.empty()) b.brief["contract"]["declared"] = in.context.contract_signature;
  b.markdown = render_brief_markdown(b.brief);
  KOPT_TRY(util::write_json_atomic(b.dir / "brief.json", "generator_brief", b.brief));
  KOPT_TRY(util::write_file_atomic(b.dir / "brief.md", b.markdown));

  ManifestContext& ctx = b.manifest;
  ctx.iteration_dir = b.dir;
  ctx.registry = in.registry;
  ctx.backend = in.backend;
  ctx.language = b.language;
  ctx.signature = *signature;
  ctx.k = in.k;
  ctx.require_guards = require_guards;
  if (in.champion) ctx.champion_guards = in.champion->candidate.guards;
  return b;
}

GeneratorOutput accept_candidates(const GeneratorInput& in, GeneratorOutput read, MethodSelection selection) {
  GeneratorOutput out;
  out.selection = std::move(selection);
  out.notes = std::move(read.notes);
  std::set<std::string> seen;
  for (const auto& m : in.history) seen.insert(m.candidate.content_hash);
  for (auto& c : read.candidates) {
    if (!seen.insert(c.content_hash).second) {
      out.notes.push_back(fmt::format("{}: identical to a candidate already measured or listed; skipped", c.source.filename().string()));
      continue;
    }
    c.id = fmt::format("i{}x{}", in.iteration, out.candidates.size() + 1);
    out.candidates.push_back(std::move(c));
  }
  return out;
}

Result<GeneratorOutput> ExternalGenerator::generate(const GeneratorInput& in) {
  KOPT_TRY_ASSIGN(BriefFiles b, write_brief_files(in, opts_.manifest_name, opts_.require_guards));
  const fs::path& dir = b.dir;
  std::error_code ec;
  const fs::path manifest_path = dir / opts_.manifest_name;
  fs::remove(manifest_path, ec);  // never read a stale manifest
  util::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", command_};
  spec.cwd = dir.string();
  spec.env = {{"KOPT_BRIEF", (dir / "brief.json").string()},
              {"KOPT_ITERATION_DIR", dir.string()},
              {"KOPT_K", std::to_string(in.k)}};
  spec.timeout_s = opts_.timeout_s;
  util::ProcessResult pr = runner_.run(spec);
  auto logged = util::write_file_atomic(dir / "generator.log", fmt::format("$ {}\n[{}]\n--- stdout\n{}\n--- stderr\n{}\n",
                                                                          command_, pr.describe(), pr.stdout_text, pr.stderr_text));
  const std::string log_text = logged ? (dir / "generator.log").string() : "not written: " + logged.error().message;
  if (!pr.success())
    return input_error(fmt::format("generator command '{}' {} (log: {}){}", command_, pr.describe(), log_text,
                                   pr.stderr_text.empty() ? "" : ":\n" + tail(pr.stderr_text, 2000)));
  if (!fs::exists(manifest_path, ec))
    return input_error(fmt::format("generator command '{}' finished without writing {}", command_, manifest_path.string()));
  auto manifest = util::read_json(manifest_path);
  if (!manifest) return input_error(manifest.error().message);
  auto read = read_manifest(manifest.value(), b.manifest);
  if (!read) return input_error(manifest_path.string() + ": " + read.error().message);
  return accept_candidates(in, std::move(read).value(), std::move(b.selection));
}

}  // namespace kopt::search
