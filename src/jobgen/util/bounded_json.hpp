// Reading JSON within a memory bound: slurmrestd's answers and users' launcher configs. Their size
// is capped where they are read (RestConfig::max_body_bytes, FileSystem reads), but a few MiB of
// "[[[[" or of one-character values would still become a tree many times larger: a parse here
// refuses a document nested deeper than kMaxJsonDepth, or one that would hold more than
// kMaxJsonValues values at once. Values a callback drops (returns false for, as with nlohmann's
// parser_callback_t) stop counting, so a queue of 20,000 jobs decoded one record at a time stays
// within the bound.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "jobgen/util/error.hpp"

namespace jobgen::util {

inline constexpr int kMaxJsonDepth = 64;
inline constexpr std::size_t kMaxJsonValues = 200'000;

// nlohmann::json::parse(body, callback, false) within the bounds; a document beyond them is
// `discarded` and `why` (if given) says which bound it broke. `callback` may be null.
nlohmann::json parse_bounded(std::string_view body,
                             const nlohmann::json::parser_callback_t& callback = nullptr,
                             std::string* why = nullptr);

// A user's JSON file (e.g. a DeepSpeed config), within the same bounds. Comments are allowed, as
// DeepSpeed reads its config with hjson. A syntax error or a broken bound is invalid input at
// source:line:col of the offending character.
Expected<nlohmann::json> parse_json_file(std::string_view text, const std::string& source);

}  // namespace jobgen::util
