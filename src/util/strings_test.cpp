#include "util/strings.h"

#include <gtest/gtest.h>

#include "util/fs.h"
#include "util/hash.h"
#include "util/json_io.h"

namespace kopt::util {

TEST(Strings, TrimSplitJoin) {
  EXPECT_EQ(trim("  a b \n"), "a b");
  EXPECT_EQ(split("a,,b", ','), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(split("a,,b", ',', false), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(split_lines("x\r\ny\n"), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(join({"a", "b"}, "-"), "a-b");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

TEST(Strings, IdentifierAndEditDistance) {
  EXPECT_TRUE(is_identifier("_M2"));
  EXPECT_FALSE(is_identifier("2M"));
  EXPECT_FALSE(is_identifier(""));
  EXPECT_EQ(edit_distance("optmize", "optimize"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(Hash, FieldsAreLengthPrefixed) {
  Hasher a, b;
  a.add("ab").add("c");
  b.add("a").add("bc");
  EXPECT_NE(a.hex(), b.hex());
  EXPECT_EQ(content_hash("x").size(), 32u);
  EXPECT_EQ(content_hash("x"), content_hash("x"));
}

TEST(Strings, OffWordsTurnASwitchOffWhateverTheirCase) {
  for (const char* w : {"off", "OFF", " 0", "no", "False\n"}) EXPECT_TRUE(is_off_word(w)) << w;
  for (const char* w : {"", "on", "1", "yes", "/tmp/cache", "offline"}) EXPECT_FALSE(is_off_word(w)) << w;
  ::setenv("KOPT_TEST_SWITCH", "Off", 1);
  EXPECT_TRUE(env_off("KOPT_TEST_SWITCH"));
  ::setenv("KOPT_TEST_SWITCH", "/a/path", 1);
  EXPECT_FALSE(env_off("KOPT_TEST_SWITCH"));
  ::unsetenv("KOPT_TEST_SWITCH");
  EXPECT_FALSE(env_off("KOPT_TEST_SWITCH"));
}

TEST(JsonIo, AtomicWriteWithMetaBlock) {
  std::string path = ::testing::TempDir() + "/kopt_json_io_test.json";
  ASSERT_TRUE(write_json_atomic(path, "test", Json{{"value_ms", 1.5}}).ok());
  auto j = read_json(path);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["meta"]["kind"], "test");
  EXPECT_EQ((*j)["meta"]["kopt_version"], KOPT_VERSION);
  EXPECT_DOUBLE_EQ((*j)["value_ms"].get<double>(), 1.5);
  EXPECT_FALSE(read_json("/nonexistent/x.json").ok());
}

}  // namespace kopt::util
