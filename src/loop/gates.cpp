// Before the gates on the baseline (baseline_gates.cpp): the inputs and the search space, the hardware gate's check,
// the run directory (new, or the one --resume names) and the measuring slots.
#include "compile/pool.h"
#include "dispatch/gpus.h"
#include "loop/optimizer.h"
#include "loop/phase.h"
#include "pipeline/placement.h"
#include "pipeline/triton.h"
#include "profile/plan.h"
#include "search/annotations.h"
#include "search/builtin_generator.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/output.h"
#include "util/strings.h"

namespace kopt::loop {

namespace fs = std::filesystem;

std::optional<RunOutcome> Optimizer::check_inputs() {
  auto report = [this](const Error& e) {
    util::note_failure(e.message);
    return outcome(RunEnd::kInputError, e, "kopt optimize: " + e.message + "\n");
  };
  if (auto st = pipeline::validate(o_.job); !st) return report(st.error());
  if (auto st = validate_options(o_); !st) return report(st.error());
  // The search space, before anything is written: annotation errors are input errors.
  auto space = [&]() -> Status {
    KOPT_TRY_ASSIGN(source_text_, util::read_file(o_.job.kernel));
    KOPT_TRY_ASSIGN(auto reg, search::registry());
    reg_ = &reg.get();
    KOPT_TRY_ASSIGN(auto ann, search::parse_annotations(source_text_, o_.job.kernel.string()));
    if (ann.empty()) {
      // No annotations: the space kopt derives from the code (docs/ANNOTATIONS.md), searched through a copy.
      // What it includes or imports from (local_includes), as `kopt annotate` reads them: the same derivation.
      auto d = search::derive(source_text_, o_.job.kernel.string(), search::local_includes(o_.job.kernel, source_text_));
      auto back = d && !d->empty() ? search::parse_annotations(d->instrumented, o_.job.kernel.string())
                                   : Result<search::Annotations>(search::Annotations{});
      if (!d || !back) {
        say("kopt optimize: no search space could be derived from {} ({}): only the flag methods are searched",
            o_.job.kernel.string(), (!d ? d.error() : back.error()).message);
      } else if (!d->empty()) {
        ann = std::move(back).value();
        source_text_ = d->instrumented;
        derived_ = std::move(d).value();
      }
    }
    search::SpaceOptions so;
    if (pipeline::is_triton_kernel(o_.job.kernel)) so.backend = search::Backend::kTriton;
    so.numerics = o_.job.numerics;
    so.arch = 90;
    KOPT_TRY_ASSIGN(space_, search::build_space(ann, *reg_, so));
    if (!derived_ && !ann.empty())
      if (auto d = search::derive(source_text_, o_.job.kernel.string()); d && !d->params.empty())
        say("kopt optimize: note: kopt annotate derives {} more parameter(s) from the code ({}, ...); not added: the "
            "@kopt lines are the authority",
            d->params.size(), d->params.front().name);
    return ok_status();
  }();
  if (!space) return report(space.error());
  auto jobs = compile::parse_jobs(o_.job.compile_jobs);
  if (!jobs) return report(jobs.error());
  jobs_ = *jobs;  // 0: auto, sized per batch by the pool
  return std::nullopt;
}

// The hardware gate's check, before anything is written: without the hardware a new run makes no run directory
// and a resumed one stays as it was (resumable). Keeps the result for pass_gates().
std::optional<RunOutcome> Optimizer::check_hardware() {
  {
    Phase p(*this, "gates");
    say("gate 1/4 hardware (kopt doctor)...");
    hw_ = lab_.hardware();
  }
  if (util::interrupted()) return outcome(RunEnd::kInterrupted, std::nullopt, "kopt optimize: interrupted\n");
  if (hw_->passed) return std::nullopt;
  std::string why = "stopped at the hardware gate: missing or broken: " + util::join(hw_->failed_required, ", ");
  util::note_failure(why);
  return outcome(RunEnd::kHardwareGate, gate_error(why),
                 fmt::format("kopt optimize: {} (kopt doctor shows each check)\n  {}\n", why,
                             resuming_ ? "the run directory " + dir_.string() + " stays resumable; continue it where the gate "
                                         "passes with: kopt optimize --resume " + dir_.string()
                                       : std::string("no run directory was made")));
}

std::optional<RunOutcome> Optimizer::open_run_dir() {
  resuming_ = o_.resume.has_value();
  if (resuming_) {
    dir_ = *o_.resume;
    auto j = util::read_json(dir_ / "state.json");
    if (!j) {
      util::note_failure("--resume " + dir_.string() + ": " + j.error().message);
      return outcome(RunEnd::kInputError, input_error(j.error().message),
                     fmt::format("kopt optimize: --resume {}: {}\n", dir_.string(), j.error().message));
    }
    auto s = state_from_json(*j);
    if (!s) {
      util::note_failure(s.error().message);
      return outcome(RunEnd::kInputError, s.error(), "kopt optimize: " + s.error().message + "\n");
    }
    st_ = *s;
    clock_.wall_base_s = st_.wall.whole_s;
    if (st_.stop_reason == StopReason::kGateFailed) {
      // Not a finished run: it never measured a candidate, and its gate failure is not undone by resuming.
      std::string why = fmt::format("--resume {}: this run stopped at a gate ({}) and cannot be resumed; fix the cause and "
                                    "start a new run with the same command (its stop.json and summary.md say more)",
                                    dir_.string(), st_.stop_detail.empty() ? "no detail recorded" : st_.stop_detail);
      util::note_failure(why);
      return outcome(RunEnd::kInputError, input_error(why), "kopt optimize: " + why + "\n");
    }
    if (st_.finished())
      return outcome(RunEnd::kAlreadyFinished, std::nullopt,
                     fmt::format("kopt optimize: {} already finished ({}); see its summary.md\n", dir_.string(),
                                 stop_name(st_.stop_reason)));
    say("kopt optimize: resuming {} after iteration {}", dir_.string(), st_.iterations_done);
    // What the run continues with (--resume may change the iterations, the budget, the GPUs): a later --resume
    // starts from these, not from the first start's.
    if (auto st = write_json(dir_ / "options.json", "options", options_to_json(o_)); !st) return fail(st.error());
  } else {
    auto d = pipeline::make_run_dir(o_.out, "run");
    if (!d) {
      util::note_failure(d.error().message);
      return outcome(RunEnd::kInputError, d.error(), "kopt optimize: " + d.error().message + "\n");
    }
    dir_ = *d;
    if (auto st = write_json(dir_ / "options.json", "options", options_to_json(o_)); !st) return fail(st.error());
    say("kopt optimize {} [{}] -> {}", o_.job.kernel.string(), format_dims(o_.job.dims), dir_.string());
  }
  // The limits are the options' (a resumed run may have been given new ones).
  st_.stop.max_iterations = o_.iterations;
  st_.stop.patience = patience_for(o_);
  // An explicit --patience is the user's rule for when to stop: the exploration rule is auto's (decisions.h).
  st_.stop.explore_patience = o_.patience > 0 ? 0 : StopState::kExplorePatience;
  st_.stop.time_budget_s = o_.time_budget_s;
  if (derived_)
    if (auto st = use_derived_space(); !st) return fail(st.error());
  return std::nullopt;
}

std::optional<RunOutcome> Optimizer::choose_slots(const HardwareGate& hw) {
  slots_.clear();
  std::vector<runner::WorkerSpec> specs;
  util::Json rec = util::Json::array();
  if (!o_.ray_address.empty()) {
    // A Ray cluster: one bridge per slot, each holding one GPU of the cluster through a Ray actor.
    if (pipeline::is_triton_kernel(o_.job.kernel))
      return stop("hardware", input_error("--ray measures CUDA/CUTLASS libraries through kopt's worker; a Triton kernel is "
                                          "measured by one-shot Python children on this host: drop --ray"), util::Json::object());
    if (o_.gpus.kind != dispatch::GpuSelection::Kind::kCount)
      return stop("hardware", input_error("--ray needs the number of GPU slots to use: --gpus N"), util::Json::object());
    for (int i = 0; i < o_.gpus.count; ++i) {
      auto w = runner::ray_worker_spec(o_.ray_address, i);
      specs.push_back(std::move(w));
      slots_.push_back({fmt::format("Ray slot {}", i)});
      rec.push_back({{"slot", i}, {"name", slots_.back().name}, {"ray_address", o_.ray_address}});
    }
  } else {
    auto chosen = dispatch::resolve_gpus(o_.gpus, hw.gpus.empty() ? std::vector<device::GpuInfo>{hw.gpu} : hw.gpus);
    if (!chosen) return stop("hardware", chosen.error(), hw.report);
    for (const auto& sl : *chosen) {
      runner::WorkerSpec w;
      if (!sl.visible_devices.empty()) w.env["CUDA_VISIBLE_DEVICES"] = sl.visible_devices;
      specs.push_back(std::move(w));
      slots_.push_back({sl.name});
      rec.push_back({{"slot", static_cast<int>(slots_.size()) - 1}, {"name", sl.name}, {"gpu", device::to_json(sl.gpu)},
                     {"cuda_visible_devices", sl.visible_devices}});
    }
    gpu_ = chosen->front().gpu;  // ceilings, the roofline and profiles are the first slot's (one model: any slot's)
  }
  st_.measuring["slots"] = rec;
  // Today's path exactly: one slot on the first GPU in kopt's own environment: the lab keeps its one worker.
  const bool plain = specs.size() == 1 && specs.front().argv.empty() && specs.front().env.empty();
  if (!plain) lab_.use_slots(specs);
  if (!plain) {
    std::string names;
    for (const auto& sl : slots_) {
      if (!names.empty()) names += ", ";
      names += sl.name;
    }
    say("  measuring on {} slot(s): {}", slots_.size(), names);
  }
  return std::nullopt;
}

}  // namespace kopt::loop
