#include "jobgen/util/names.hpp"

namespace jobgen::util {

std::string sanitize_job_name(std::string_view name) {
  std::string out;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '+' || c == '_';
    const char put = ok ? c : '_';
    if (put == '_' && !out.empty() && out.back() == '_') continue;
    out += put;
    if (out.size() == 64) break;
  }
  return out.empty() ? "job" : out;
}

bool is_shell_identifier(std::string_view s) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && (i == 0 || c < '0' || c > '9')) return false;
  }
  return true;
}

}  // namespace jobgen::util
