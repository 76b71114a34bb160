// What jobgen prints never carries a secret from a URL: a slurmrestd URL may hold a password
// (scheme://user:password@host) or a token in its path or query (a proxy's "/t/SECRET/"), so only
// its scheme, host and port are shown (terminal escapes: util/strings.hpp).
//
// Contract: redact_url replaces the user information of a "scheme://userinfo@host..." URL with
// "***" and its path, query and fragment, when there are any beyond "/", with "/***"
// ("http://alice:s3cret@h:6820/x?t=1" -> "http://***@h:6820/***"); text without "://" (a UNIX
// socket "unix:/run/s.sock") is unchanged.
#pragma once

#include <string>
#include <string_view>

namespace jobgen::util {

std::string redact_url(std::string_view url);
// Every URL inside a message (a word containing "://", up to a blank, quote or bracket) redacted
// as redact_url does; the rest of the text unchanged.
std::string redact_urls_in(std::string_view text);

}  // namespace jobgen::util
