// Credentials for slurmrestd (rest_auth/jwt): where the token comes from, what its claims say,
// and what to tell the user when slurmrestd refuses it (HTTP 401).
//
// Contract: a token NEVER appears in output, logs, error messages, the ledger or scripts.
// Nothing here prints one; explain_unauthorized() talks about the token's origin, user and expiry
// only; redact() is applied to every message the REST backend builds from server text.
// Times are Unix seconds, shown in UTC.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "jobgen/sys/process.hpp"
#include "jobgen/sys/system.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::slurm {

// The payload claims jobgen reads from a Slurm JWT (header.payload.signature, base64url JSON).
// The signature is not checked: only slurmctld can.
struct JwtClaims {
  std::optional<int64_t> exp;  // expiry
  std::optional<int64_t> iat;  // issued at
  std::string sun;             // Slurm user name
};
std::optional<JwtClaims> decode_jwt(std::string_view token);

// How to get a token: runs e.g. `scontrol token` and returns its output ("SLURM_JWT=...").
using TokenFetcher = std::function<Expected<std::string>()>;
TokenFetcher scontrol_token_fetcher(sys::CommandRunner& runner, int lifespan_s = 7200);

struct AuthSettings {
  std::string token_file;       // profile rest.token_file (may hold "SLURM_JWT=..." or the token)
  bool allow_scontrol = false;  // profile rest.allow_scontrol_token
};

struct RestToken {
  std::string token;   // empty = none (e.g. rest_auth/local over a UNIX socket)
  std::string origin;  // "SLURM_JWT", "token file /x", "scontrol token"; for messages
  std::string user;    // X-SLURM-USER-NAME: the token's `sun` claim, else sys::current_user
  std::optional<JwtClaims> claims;
};

// SLURM_JWT, else the token file, else `fetch` when allowed. No token is not an error (the
// server decides); an unreadable token file is.
Expected<RestToken> find_token(const sys::Environment& env, const sys::FileSystem& fs,
                               const AuthSettings& settings, const TokenFetcher& fetch = {});

// The message for an HTTP 401 (or Slurm error 1007): missing, expired (when, in UTC, and how long
// ago) or rejected, and how to get a new token.
std::string explain_unauthorized(const RestToken& token, int64_t now, std::string_view url);

// `text` with every occurrence of `secret` replaced by "<token>" (no-op for an empty secret).
std::string redact(std::string text, std::string_view secret);

}  // namespace jobgen::slurm
