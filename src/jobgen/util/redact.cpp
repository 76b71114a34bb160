#include "jobgen/util/redact.hpp"

namespace jobgen::util {

std::string redact_url(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const auto host = scheme + 3;
  // The authority ends at the first '/', '?' or '#'; its last '@' ends the user information.
  const auto end = url.find_first_of("/?#", host);
  const std::string_view authority =
      url.substr(host, end == std::string_view::npos ? std::string_view::npos : end - host);
  std::string out(url.substr(0, host));
  const auto at = authority.rfind('@');
  out += at == std::string_view::npos ? authority : "***" + std::string(authority.substr(at));
  if (end == std::string_view::npos) return out;
  const std::string_view rest = url.substr(end);
  out += rest == "/" ? "/" : "/***";
  return out;
}

std::string redact_urls_in(std::string_view text) {
  constexpr std::string_view kStops = " \t\n'\"()<>";
  std::string out;
  std::size_t done = 0;
  for (std::size_t at = text.find("://"); at != std::string_view::npos;
       at = text.find("://", done)) {
    const std::size_t before = text.find_last_of(kStops, at);
    const std::size_t start = before == std::string_view::npos ? 0 : before + 1;
    std::size_t end = text.find_first_of(kStops, at);
    if (end == std::string_view::npos) end = text.size();
    // Punctuation after a URL ("http://h/x: failed", "..., http://h/x.") is the sentence's.
    while (end > at + 3 && std::string_view(":,.;").find(text[end - 1]) != std::string_view::npos)
      --end;
    if (start < done) {  // "://" inside a word already redacted
      done = end;
      continue;
    }
    out += text.substr(done, start - done);
    out += redact_url(text.substr(start, end - start));
    done = end;
  }
  out += text.substr(done);
  return out;
}

}  // namespace jobgen::util
