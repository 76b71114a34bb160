#include "jobgen/util/redact.hpp"

namespace jobgen::util {

std::string redact_url(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const auto host = scheme + 3;
  // The authority ends at the first '/', '?' or '#'; its last '@' ends the user information.
  const auto end = url.find_first_of("/?#", host);
  const auto at = url.substr(host, end == std::string_view::npos ? end : end - host).rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  return std::string(url.substr(0, host)) + "***" + std::string(url.substr(host + at));
}

}  // namespace jobgen::util
