#include "search/llm_reply.h"

#include <gtest/gtest.h>

namespace kopt::search {
namespace {

constexpr SourceLanguage kCuda = SourceLanguage::kCuda;

TEST(LlmReply, CodeBlocksNameTheirFilesInSeveralWays) {
  const std::string reply = R"(I vectorise the loads.

```cuda file=v1.cu
// one
```

**v2.cu**:
```cpp
// two
```

```cuda
// file: kernels/v3.cu
// three
```

```json
{"candidates": [{"file": "v1.cu", "methods": ["vectorized_access"]}, {"file": "./out/v2.cu"}]}
```
)";
  auto r = parse_reply(reply, kCuda);
  EXPECT_TRUE(r.problems.empty()) << r.problems.front();
  ASSERT_EQ(r.files.size(), 3u);
  EXPECT_EQ(r.files[0].name, "v1.cu");
  EXPECT_EQ(r.files[0].text, "// one\n");
  EXPECT_EQ(r.files[1].name, "v2.cu");
  EXPECT_EQ(r.files[2].name, "v3.cu");  // a path is cut to its base name
  ASSERT_TRUE(r.manifest);
  EXPECT_EQ((*r.manifest)["candidates"].size(), 2u);
  EXPECT_EQ((*r.manifest)["candidates"][1]["file"], "v2.cu");
}

TEST(LlmReply, OneUnnamedBlockTakesTheNameOfTheOneEntryWithoutABlock) {
  auto r = parse_reply("```cuda\nextern \"C\" void solve() {}\n```\n```json\n{\"file\": \"v4.cu\", \"methods\": []}\n```\n", kCuda);
  EXPECT_TRUE(r.problems.empty());
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].name, "v4.cu");
  ASSERT_TRUE(r.manifest);  // a bare entry is wrapped
  EXPECT_EQ((*r.manifest)["candidates"][0]["file"], "v4.cu");
}

TEST(LlmReply, WhatCannotBeUsedIsAProblemInWords) {
  // Two unnamed blocks: neither can be placed.
  auto r = parse_reply("```cuda\na\n```\n```cuda\nb\n```\n", kCuda);
  EXPECT_TRUE(r.files.empty());
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_NE(r.problems[0].find("the code block on line 1 names no file: open it with ```cuda file=v1.cu"), std::string::npos);
  EXPECT_FALSE(r.manifest);
  // A reply cut short.
  r = parse_reply("```cuda file=v1.cu\n__global__ void k(\n", kCuda);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find("is not closed: the reply was cut short"), std::string::npos);
  // Malformed manifest JSON.
  r = parse_reply("```json\n{\"candidates\": [{\"file\": \"v1.cu\",]}\n```\n", kCuda);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find("the manifest block (line 1) is not valid JSON"), std::string::npos) << r.problems[0];
  // A header or a file in a directory outside: not a candidate.
  r = parse_reply("```cuda file=util.cuh\nx\n```\n", kCuda);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find("is for 'util.cuh': a candidate must be one complete .cu file"), std::string::npos);
  // Shell commands and plain text blocks are not candidates, and not problems.
  r = parse_reply("```bash\nnvcc -O3 v1.cu\n```\n```text\nsome output\n```\n", kCuda);
  EXPECT_TRUE(r.problems.empty());
  EXPECT_TRUE(r.files.empty());
  // No code at all.
  r = parse_reply("I cannot help with that.", kCuda);
  EXPECT_TRUE(r.files.empty());
  EXPECT_FALSE(r.manifest);
}

TEST(LlmReply, TildeFencesLongerFencesAndPython) {
  auto r = parse_reply("~~~python file=v1.py\nx = 1\n```\nnot a fence end\n~~~\n````json\n{\"candidates\": []}\n````\n",
                       SourceLanguage::kPython);
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].text, "x = 1\n```\nnot a fence end\n");
  ASSERT_TRUE(r.manifest);
  EXPECT_TRUE((*r.manifest)["candidates"].empty());
}

TEST(LlmReply, CandidateFileNames) {
  EXPECT_TRUE(valid_candidate_file_name("v1.cu", kCuda));
  EXPECT_TRUE(valid_candidate_file_name("sgemm_tiled-2.cu", kCuda));
  EXPECT_FALSE(valid_candidate_file_name("../v1.cu", kCuda));
  EXPECT_FALSE(valid_candidate_file_name("a/v1.cu", kCuda));
  EXPECT_FALSE(valid_candidate_file_name("v1.py", kCuda));
  EXPECT_FALSE(valid_candidate_file_name(".cu", kCuda));
  EXPECT_TRUE(valid_candidate_file_name("k.py", SourceLanguage::kPython));
}

}  // namespace
}  // namespace kopt::search

namespace kopt::search {
namespace {

TEST(LlmReply, ProseNamingTheChampionDoesNotNameTheCandidate) {
  auto r = parse_reply("Here is my change to champion.cu:\n```cuda\n// new\n```\n```json\n{\"candidates\": [{\"file\": \"v1.cu\"}]}\n```\n",
                       SourceLanguage::kCuda);
  EXPECT_TRUE(r.problems.empty()) << r.problems.front();
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].name, "v1.cu");
}

}  // namespace
}  // namespace kopt::search
