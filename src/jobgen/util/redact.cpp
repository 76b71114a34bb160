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

}  // namespace jobgen::util
