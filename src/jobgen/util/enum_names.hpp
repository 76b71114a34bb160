// Enum <-> name tables written once: every option jobgen reads by name (precision, strategy,
// backend, launcher, ...) keeps one constexpr table of (value, spelling), and these helpers turn it
// into to_string() and a parser with "did you mean" and the list of valid spellings.
//
// Contract: parse_name() accepts any case and '_' for '-' ("AMP_BF16" == "amp-bf16"); an unknown
// word is Exit::invalid_input, "unknown <what> 'word'; did you mean 'x'? Valid: a, b, c".
#pragma once

#include <array>
#include <cctype>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jobgen/util/error.hpp"

namespace jobgen::util {

template <class E, std::size_t N>
using Names = std::array<std::pair<E, std::string_view>, N>;

template <class E, std::size_t N>
std::string_view name_of(const Names<E, N>& names, E value) {
  for (const auto& [e, s] : names)
    if (e == value) return s;
  return "?";
}

template <class E, std::size_t N>
std::vector<std::string> names_of(const Names<E, N>& names) {
  std::vector<std::string> all;
  for (const auto& entry : names) all.emplace_back(entry.second);
  return all;
}

template <class E, std::size_t N>
Expected<E> parse_name(const Names<E, N>& names, std::string_view text, std::string_view what) {
  std::string key;
  for (const char c : text)
    key += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [e, s] : names)
    if (s == key) return e;
  const std::vector<std::string> all = names_of(names);
  std::string message = "unknown " + std::string(what) + " '" + std::string(text) + "'";
  if (const std::string near = closest_match(key, all); !near.empty())
    message += "; did you mean '" + near + "'?";
  message += " Valid: ";
  for (std::size_t i = 0; i < all.size(); ++i) message += (i ? ", " : "") + all[i];
  return invalid(message);
}

}  // namespace jobgen::util
