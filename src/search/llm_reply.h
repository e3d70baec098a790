#pragma once
// A language model's reply, read: fenced code blocks that name their file, and the JSON manifest block.
// Pure: text in, values out. What cannot be used is a problem in words, to be sent back for repair.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "search/source_scan.h"
#include "util/json_io.h"

namespace kopt::search {

struct ReplyFile {
  std::string name;  // a bare file name with the champion's extension (.cu or .py)
  std::string text;
};

struct ParsedReply {
  std::vector<ReplyFile> files;
  std::optional<util::Json> manifest;  // {"candidates": [...]}, the manifest blocks merged
  std::vector<std::string> problems;   // what could not be used, in words
};

// Reads the reply. A code block names its file by its info string (```cuda file=v1.cu, ```cu v1.cu), by a
// first-line comment (// file: v1.cu), or by the line just before it (**v1.cu**:). One unnamed block takes the
// name of the one manifest entry without a block. The manifest is a JSON block (any info string) holding
// {"candidates": [...]}.
ParsedReply parse_reply(std::string_view content, SourceLanguage lang);

// Whether `name` may be written as a candidate file: a bare name (no directory, no ..), letters, digits,
// '_', '-', '.', with the language's extension (.cu/.py).
bool valid_candidate_file_name(std::string_view name, SourceLanguage lang);

}  // namespace kopt::search
