// What jobgen prints never carries a secret or drives the terminal: a URL written as
// scheme://user:password@host keeps its user information out of every message and listing, and
// text from input files (names, notes, bad values) cannot smuggle escape sequences to a terminal.
//
// Contract: redact_url replaces the user information of a "scheme://userinfo@host..." URL with
// "***" ("http://alice:s3cret@h:6820/x" -> "http://***@h:6820/x"); other text is unchanged.
// escape_controls replaces every control character but newline and tab (C0, DEL, and the C1
// range as UTF-8 encodes it, U+0080-U+009F) with "\xNN"; other text, UTF-8 included, is
// unchanged.
#pragma once

#include <string>
#include <string_view>

namespace jobgen::util {

std::string redact_url(std::string_view url);
std::string escape_controls(std::string_view text);

}  // namespace jobgen::util
