// RestBackend's set-up: construction from the profile, the token, and the API version the
// server and jobgen share (asked from /openapi/v3, else probed with ping, newest first). Done
// once, on the first request, so that commands that never reach slurmrestd never need a token.
#include "jobgen/slurm/rest/rest_backend.hpp"

#include "jobgen/sys/settings.hpp"
#include "jobgen/util/redact.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

std::map<std::string, std::string> default_submit_environment(const sys::Environment& env) {
  std::map<std::string, std::string> out;
  for (const char* name : {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "SHELL"})
    if (auto v = env.get(name); v && !v->empty()) out[name] = *v;
  return out;
}

RestBackend::RestBackend(RestConfig config, sys::HttpClient& http, const sys::Environment& env,
                         const sys::FileSystem& fs, sys::Clock& clock, TokenFetcher fetch)
    : config_(std::move(config)),
      http_(http),
      env_(env),
      fs_(fs),
      clock_(clock),
      fetch_(std::move(fetch)) {}

RestBackend::RestBackend(RestConfig config, std::unique_ptr<sys::HttpClient> http,
                         const sys::Environment& env, const sys::FileSystem& fs, sys::Clock& clock,
                         TokenFetcher fetch)
    : config_(std::move(config)),
      owned_http_(std::move(http)),
      http_(*owned_http_),
      env_(env),
      fs_(fs),
      clock_(clock),
      fetch_(std::move(fetch)) {}

std::unique_ptr<Backend> make_rest_backend(const std::optional<profile::RestSettings>& settings,
                                           const sys::System& system, std::string working_dir) {
  RestConfig config;
  sys::CurlOptions curl;
  if (settings) {
    config.url = settings->url;
    config.api_version = settings->api_version;
    config.auth = AuthSettings{settings->token_file, settings->allow_scontrol_token};
    curl.ca_bundle = settings->ca_bundle;
  }
  config.environment = default_submit_environment(system.env);
  config.working_dir = std::move(working_dir);
  return std::make_unique<RestBackend>(std::move(config), system.http.make(curl), system.env,
                                       system.fs, system.clock,
                                       scontrol_token_fetcher(system.runner));
}

std::string RestBackend::api(const std::string& tail) const {
  return "/slurm/" + std::string(dialect_->version) + "/" + tail;
}

Error RestBackend::clean(Error error) const {
  error.message = redact(std::move(error.message), token_.token);
  return error;
}

Expected<void> RestBackend::begin_call() {
  if (!limits_read_) {
    JOBGEN_TRY_ASSIGN(auto seconds, sys::positive_setting(env_, "JOBGEN_REST_TIMEOUT", 86'400));
    if (seconds) config_.budget = std::chrono::seconds(*seconds);
    JOBGEN_TRY_ASSIGN(auto mib,
                      sys::positive_setting(env_, "JOBGEN_REST_MAX_RESPONSE_MIB", 65'536));
    if (mib) config_.max_body_bytes = static_cast<std::size_t>(*mib) << 20;
    limits_read_ = true;
  }
  deadline_ = clock_.now() + config_.budget;
  return prepare();
}

Expected<void> RestBackend::prepare() {
  if (prepared_) return {};
  std::string url = env_.get("SLURMRESTD_URL").value_or("");
  if (url.empty()) url = config_.url;
  if (url.empty())
    return invalid(
        "no slurmrestd URL: set rest.url in the cluster profile or SLURMRESTD_URL in the "
        "environment (e.g. http://HOST:6820 or unix:/run/slurmrestd/slurmrestd.socket)");
  JOBGEN_TRY_ASSIGN(auto endpoint, sys::parse_endpoint(url));
  endpoint_ = endpoint;
  if (!token_found_) {  // once: `scontrol token` is an RPC, not to be repeated while retrying
    auto token = find_token(env_, fs_, config_.auth, fetch_);
    if (!token) return std::unexpected(clean(token.error()));
    token_ = std::move(*token);
    token_found_ = true;
  }
  // Set-up is done only with a version: a failed discovery (slurmrestd down, an unknown pinned
  // version) is asked again on the next call, never taken as done with no dialect.
  JOBGEN_TRY_ASSIGN(auto chosen, choose_version(url));
  dialect_ = chosen;
  prepared_ = true;
  return {};
}

Expected<const RestDialect*> RestBackend::choose_version(const std::string& url) {
  std::string wanted = env_.get("JOBGEN_REST_API_VERSION").value_or("");
  if (wanted.empty()) wanted = config_.api_version;
  if (!wanted.empty()) return find_dialect(wanted);
  // Discovery: the versions the server documents, else probe ping from the newest.
  JOBGEN_TRY_ASSIGN(auto doc, send("GET", "/openapi/v3", "", true));
  if (doc.status == 401 || doc.status == 403)
    return std::unexpected(answer_error(doc, {}, "GET /openapi/v3"));
  std::vector<std::string> offered;
  if (doc.status == 200) offered = versions_in_openapi(doc.body);
  const RestDialect* chosen = choose_dialect(offered);
  if (!chosen && offered.empty()) {
    auto all = rest_dialects();
    for (auto it = all.rbegin(); it != all.rend() && !chosen; ++it) {
      auto ping = send("GET", "/slurm/" + std::string(it->version) + "/ping", "", true);
      if (!ping) return std::unexpected(ping.error());
      if (ping->status == 401 || ping->status == 403)
        return std::unexpected(answer_error(*ping, {}, "GET ping"));
      if (ping->status == 200) chosen = &*it;
    }
  }
  if (!chosen) {
    std::string served;
    for (const auto& v : offered) served += (served.empty() ? "" : ", ") + v;
    return fail("slurmrestd at " + util::redact_url(url) + " offers " +
                (served.empty() ? std::string("no API version jobgen recognises") : served) +
                "; jobgen speaks " + supported_versions_text() +
                " (the server must load one of them, e.g. slurmrestd -s openapi/v0.0.38)");
  }
  return chosen;
}

Expected<const RestDialect*> RestBackend::dialect() {
  JOBGEN_TRY(begin_call());
  return dialect_;
}

}  // namespace jobgen::slurm
