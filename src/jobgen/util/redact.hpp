// What jobgen prints never carries a secret: a URL written as scheme://user:password@host keeps
// its user information out of every message and listing (terminal escapes: util/strings.hpp).
//
// Contract: redact_url replaces the user information of a "scheme://userinfo@host..." URL with
// "***" ("http://alice:s3cret@h:6820/x" -> "http://***@h:6820/x"); other text is unchanged.
#pragma once

#include <string>
#include <string_view>

namespace jobgen::util {

std::string redact_url(std::string_view url);

}  // namespace jobgen::util
