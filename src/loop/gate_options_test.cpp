#include "loop/gate_options.h"

#include <gtest/gtest.h>

#include <fstream>

namespace kopt::loop {

TEST(GateOptions, RoundTripThroughOptionsJsonAndOldRunsGetDefaults) {
  GateOptions g;
  g.workload_matrix = workload::MatrixMode::kOff;
  g.shapes_file = "/tmp/shapes.txt";
  g.no_regressions = true;
  g.dispatch = true;
  g.max_working_set_mb = 512;
  g.sanitize = sanitize::Policy::kAll;
  g.champion_gates = ChampionGates::kEach;
  util::Json j = {{"kernel", "k.cu"}};
  add_to_json(g, j);
  EXPECT_EQ(j["kernel"], "k.cu");  // merged, not replaced
  EXPECT_EQ(j["workload_matrix"], "off");
  EXPECT_TRUE(j["holdout_shapes_file"].is_null());
  auto back = gate_options_from_json(j);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->workload_matrix, workload::MatrixMode::kOff);
  EXPECT_EQ(back->shapes_file->string(), "/tmp/shapes.txt");
  EXPECT_FALSE(back->holdout_shapes_file);
  EXPECT_TRUE(back->no_regressions);
  EXPECT_TRUE(back->dispatch);
  EXPECT_DOUBLE_EQ(back->max_working_set_mb, 512);
  EXPECT_EQ(back->sanitize, sanitize::Policy::kAll);
  EXPECT_EQ(back->champion_gates, ChampionGates::kEach);
  EXPECT_EQ(GateOptions{}.champion_gates, ChampionGates::kFinal) << "a new run checks the final champion";
  auto old = gate_options_from_json(util::Json{{"kernel", "k.cu"}});
  ASSERT_TRUE(old);
  EXPECT_EQ(old->workload_matrix, workload::MatrixMode::kDefault);
  EXPECT_EQ(old->sanitize, sanitize::Policy::kFinalists);
  EXPECT_EQ(old->champion_gates, ChampionGates::kEach) << "a run made before the option resumes as it ran";
  EXPECT_FALSE(old->dispatch);
  EXPECT_FALSE(gate_options_from_json(util::Json{{"sanitize", "sometimes"}}));
  EXPECT_FALSE(gate_options_from_json(util::Json{{"champion_gates", "sometimes"}}));
}

TEST(GateOptions, ValidationParsesTheShapesFilesBeforeAnyGpuWork) {
  const Dims user{{"n", 1000}};
  GateOptions g;
  EXPECT_TRUE(validate(g, user));
  g.max_working_set_mb = -1;
  EXPECT_FALSE(validate(g, user));
  g.max_working_set_mb = 0;
  auto path = std::filesystem::temp_directory_path() / "kopt_gate_options_holdout.txt";
  std::ofstream(path) << "n=385\nn=abc\n";
  g.holdout_shapes_file = path;
  auto st = validate(g, user);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, ExitCode::kInput);
  EXPECT_NE(st.error().message.find(path.string() + ":2: n='abc' is not an integer"), std::string::npos) << st.error().message;
  std::filesystem::remove(path);
}

TEST(GateOptions, DispatchNeedsSeveralCases) {
  const Dims user{{"n", 1000}};
  GateOptions g;
  g.dispatch = true;
  EXPECT_TRUE(validate(g, user)) << "the default matrix gives cases";
  g.workload_matrix = workload::MatrixMode::kOff;
  auto st = validate(g, user);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("--dispatch"), std::string::npos) << st.error().message;
  auto path = std::filesystem::temp_directory_path() / "kopt_gate_options_dispatch.txt";
  std::ofstream(path) << "n=500\nn=1000\n";
  g.shapes_file = path;
  EXPECT_TRUE(validate(g, user)) << "a shapes file gives cases";
  std::filesystem::remove(path);
}

}  // namespace kopt::loop
