#include "jobgen/slurm/rest/auth.hpp"

#include "jobgen/sys/user.hpp"
#include "jobgen/util/redact.hpp"
#include "jobgen/util/slurm_time.hpp"

#include <cctype>
#include <ctime>
#include <nlohmann/json.hpp>

namespace jobgen::slurm {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "SLURM_JWT=abc\n" or "abc" -> "abc" (`scontrol token` prints the former).
std::string clean_token(std::string_view text) {
  text = trim(text);
  if (auto nl = text.find('\n'); nl != std::string_view::npos) text = trim(text.substr(0, nl));
  if (text.starts_with("export ")) text.remove_prefix(7);
  if (text.starts_with("SLURM_JWT=")) text.remove_prefix(10);
  return std::string(trim(text));
}

std::optional<std::string> base64url_decode(std::string_view in) {
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : in) {
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '-' || c == '+')
      v = 62;
    else if (c == '_' || c == '/')
      v = 63;
    else if (c == '=')
      break;
    else
      return std::nullopt;
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xff);
    }
  }
  return out;
}

constexpr std::string_view kHowToGetOne =
    "Get a new one on a login node with `export $(scontrol token lifespan=7200)` (lifespan in "
    "seconds), or ask your cluster admin for one; jobgen reads SLURM_JWT, the profile's "
    "rest.token_file, or runs `scontrol token` itself when the profile sets "
    "rest.allow_scontrol_token.";

}  // namespace

std::optional<JwtClaims> decode_jwt(std::string_view token) {
  auto first = token.find('.');
  if (first == std::string_view::npos) return std::nullopt;
  auto second = token.find('.', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  auto payload = base64url_decode(token.substr(first + 1, second - first - 1));
  if (!payload) return std::nullopt;
  auto doc = nlohmann::json::parse(*payload, nullptr, false);
  if (!doc.is_object()) return std::nullopt;
  JwtClaims claims;
  // Whole seconds only: get<int64_t>() of 1e300 or of an unsigned past INT64_MAX is no time.
  const auto seconds = [&](const char* key) -> std::optional<int64_t> {
    const auto it = doc.find(key);
    if (it == doc.end() || !it->is_number_integer()) return std::nullopt;
    if (it->is_number_unsigned() && it->get<uint64_t>() > uint64_t{INT64_MAX}) return std::nullopt;
    return it->get<int64_t>();
  };
  if (const auto exp = seconds("exp")) claims.exp = *exp;
  if (const auto iat = seconds("iat")) claims.iat = *iat;
  if (auto it = doc.find("sun"); it != doc.end() && it->is_string()) claims.sun = *it;
  return claims;
}

TokenFetcher scontrol_token_fetcher(sys::CommandRunner& runner, int lifespan_s) {
  return [&runner, lifespan_s]() -> Expected<std::string> {
    sys::Command cmd;
    cmd.argv = {"scontrol", "token", "lifespan=" + std::to_string(lifespan_s)};
    cmd.timeout = std::chrono::seconds(30);
    JOBGEN_TRY_ASSIGN(auto result, runner.run(cmd));
    if (result.exit_code != 0)
      return fail("`scontrol token` failed (exit " + std::to_string(result.exit_code) +
                      "): " + std::string(trim(result.err)) +
                      " (JWT may not be enabled for users: ask the admin)",
                  Exit::auth);
    return result.out;
  };
}

Expected<RestToken> find_token(const sys::Environment& env, const sys::FileSystem& fs,
                               const AuthSettings& settings, const TokenFetcher& fetch) {
  RestToken out;
  if (auto jwt = env.get("SLURM_JWT"); jwt && !clean_token(*jwt).empty()) {
    out.token = clean_token(*jwt);
    out.origin = "SLURM_JWT";
  } else if (!settings.token_file.empty()) {
    auto text = fs.read_file(settings.token_file);
    if (!text)
      return fail("the slurmrestd token file '" + settings.token_file +
                      "' (rest.token_file in the profile) cannot be read: " + text.error().message,
                  Exit::auth);
    out.token = clean_token(*text);
    out.origin = "token file " + settings.token_file;
    if (out.token.empty())
      return fail("the slurmrestd token file '" + settings.token_file + "' is empty. " +
                      std::string(kHowToGetOne),
                  Exit::auth);
  } else if (settings.allow_scontrol && fetch) {
    JOBGEN_TRY_ASSIGN(auto text, fetch());
    out.token = clean_token(text);
    out.origin = "scontrol token";
  }
  if (!out.token.empty()) out.claims = decode_jwt(out.token);
  if (out.claims && !out.claims->sun.empty()) {
    out.user = out.claims->sun;
  } else {
    out.user = sys::current_user(env);
  }
  return out;
}

std::string explain_unauthorized(const RestToken& token, int64_t now, std::string_view url) {
  std::string where = "slurmrestd at " + util::redact_url(url);
  if (token.token.empty())
    return where + " requires authentication and jobgen has no token to send. " +
           std::string(kHowToGetOne);
  if (token.claims && token.claims->exp && *token.claims->exp <= now)
    return where + " refused the token from " + token.origin + ": it expired at " +
           util::format_utc(*token.claims->exp) + " (" +
           util::format_duration(static_cast<double>(now - *token.claims->exp),
                                 util::DurationStyle::whole) +
           " ago). " + std::string(kHowToGetOne);
  std::string text = where + " rejected the token from " + token.origin;
  if (!token.user.empty()) text += " for user '" + token.user + "'";
  if (!token.claims) {
    text += ": it is not a JWT (expected three base64url parts separated by dots)";
  } else if (token.claims->exp) {
    text += " although it is valid until " + util::format_utc(*token.claims->exp) +
            " (it may be for another cluster or user, or the site changed its JWT key)";
  }
  return text + ". " + std::string(kHowToGetOne);
}

std::string redact(std::string text, std::string_view secret) {
  if (secret.empty()) return text;
  constexpr std::string_view kMask = "<token>";
  for (size_t pos = text.find(secret); pos != std::string::npos;
       pos = text.find(secret, pos + kMask.size()))
    text.replace(pos, secret.size(), kMask);
  return text;
}

}  // namespace jobgen::slurm
