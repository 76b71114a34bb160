#include "jobgen/slurm/rest_backend.hpp"

#include <algorithm>
#include <array>

namespace jobgen::slurm {

namespace {

constexpr int kNoChange = 1900;  // SLURM_NO_CHANGE_IN_DATA

bool has_error(const RestMessages& m, int number) {
  return std::ranges::any_of(m.errors,
                             [&](const RestError& e) { return slurm_error_number(e) == number; });
}

// Errors that mean "the request itself is wrong", not "something failed".
bool is_request_error(const RestMessages& m) {
  constexpr std::array kNumbers{2014, 2072, 2051, 2045, 2066};
  return std::ranges::any_of(m.errors, [&](const RestError& e) {
    return std::ranges::find(kNumbers, slurm_error_number(e)) != kNumbers.end();
  });
}

bool valid_job_id(std::string_view id) {
  return !id.empty() &&
         std::ranges::all_of(id, [](char c) { return (c >= '0' && c <= '9') || c == '_'; });
}

std::string snippet(std::string_view body) {
  std::string s(body.substr(0, 300));
  std::ranges::replace(s, '\n', ' ');
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

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
                                           const sys::Environment& env, const sys::FileSystem& fs,
                                           sys::Clock& clock, sys::CommandRunner& runner,
                                           std::string working_dir) {
  RestConfig config;
  sys::CurlOptions curl;
  if (settings) {
    config.url = settings->url;
    config.api_version = settings->api_version;
    config.auth = AuthSettings{settings->token_file, settings->allow_scontrol_token};
    curl.ca_bundle = settings->ca_bundle;
  }
  config.environment = default_submit_environment(env);
  config.working_dir = std::move(working_dir);
  return std::make_unique<RestBackend>(std::move(config),
                                       std::make_unique<sys::CurlHttpClient>(curl), env, fs, clock,
                                       scontrol_token_fetcher(runner));
}

std::string RestBackend::api(const std::string& tail) const {
  return "/slurm/" + std::string(dialect_->version) + "/" + tail;
}

Error RestBackend::clean(Error error) const {
  error.message = redact(std::move(error.message), token_.token);
  return error;
}

Expected<void> RestBackend::prepare() {
  if (prepared_) return {};
  std::string url = env_.get("SLURMRESTD_URL").value_or("");
  if (url.empty()) url = config_.url;
  if (url.empty())
    return invalid(
        "no slurmrestd URL: set rest.url in the cluster profile or SLURMRESTD_URL in the "
        "environment (e.g. http://HOST:6820 or unix:/run/slurmrestd/slurmrestd.socket)");
  auto endpoint = sys::parse_endpoint(url);
  if (!endpoint) return std::unexpected(endpoint.error());
  endpoint_ = *endpoint;
  auto token = find_token(env_, fs_, config_.auth, fetch_);
  if (!token) return std::unexpected(clean(token.error()));
  token_ = std::move(*token);
  prepared_ = true;

  std::string wanted = env_.get("JOBGEN_REST_API_VERSION").value_or("");
  if (wanted.empty()) wanted = config_.api_version;
  if (!wanted.empty()) {
    auto d = find_dialect(wanted);
    if (!d) return std::unexpected(d.error());
    dialect_ = *d;
    return {};
  }
  // Discovery: the versions the server documents, else probe ping from the newest.
  auto doc = send("GET", "/openapi/v3", "", true);
  if (!doc) return std::unexpected(doc.error());
  if (doc->status == 401 || doc->status == 403)
    return std::unexpected(answer_error(*doc, {}, "GET /openapi/v3"));
  std::vector<std::string> offered;
  if (doc->status == 200) offered = versions_in_openapi(doc->body);
  dialect_ = choose_dialect(offered);
  if (!dialect_ && offered.empty()) {
    auto all = rest_dialects();
    for (auto it = all.rbegin(); it != all.rend() && !dialect_; ++it) {
      auto ping = send("GET", "/slurm/" + std::string(it->version) + "/ping", "", true);
      if (!ping) return std::unexpected(ping.error());
      if (ping->status == 401 || ping->status == 403)
        return std::unexpected(answer_error(*ping, {}, "GET ping"));
      if (ping->status == 200) dialect_ = &*it;
    }
  }
  if (!dialect_) {
    std::string served;
    for (const auto& v : offered) served += (served.empty() ? "" : ", ") + v;
    return fail("slurmrestd at " + url + " offers " +
                (served.empty() ? std::string("no API version jobgen recognises") : served) +
                "; jobgen speaks " + supported_versions_text() +
                " (the server must load one of them, e.g. slurmrestd -s openapi/v0.0.38)");
  }
  return {};
}

Expected<const RestDialect*> RestBackend::dialect() {
  if (auto ok = prepare(); !ok) return std::unexpected(ok.error());
  return dialect_;
}

Expected<sys::HttpResponse> RestBackend::send(const std::string& method, const std::string& path,
                                              const std::string& body, bool retry_any_failure) {
  sys::HttpRequest request;
  request.method = method;
  request.url = endpoint_.base_url + path;
  request.unix_socket = endpoint_.unix_socket;
  request.connect_timeout = config_.connect_timeout;
  request.timeout = config_.timeout;
  request.headers.emplace_back("Accept", "application/json");
  if (!body.empty()) request.headers.emplace_back("Content-Type", "application/json");
  if (!token_.token.empty()) {
    request.headers.emplace_back("X-SLURM-USER-NAME", token_.user);
    request.headers.emplace_back("X-SLURM-USER-TOKEN", token_.token);
  }
  request.body = body;

  std::string last;
  auto delay = config_.backoff;
  const int attempts = std::max(1, config_.attempts);
  int attempt = 1;
  for (;; ++attempt) {
    auto result = http_.send(request);
    if (result) {
      const long s = result->status;
      if (!(retry_any_failure && (s == 502 || s == 503 || s == 504) && attempt < attempts))
        return std::move(*result);
      last = "HTTP " + std::to_string(s);
    } else {
      last = result.error().message;
      if (!retry_any_failure && result.error().maybe_sent) break;  // never re-send a POST
    }
    if (attempt >= attempts) break;
    clock_.sleep_for(delay);
    delay *= 2;
  }
  std::string where =
      endpoint_.unix_socket.empty() ? endpoint_.base_url : "unix:" + endpoint_.unix_socket;
  std::string text = "cannot reach slurmrestd at " + where + ": " + last;
  if (attempt > 1) text += " (" + std::to_string(attempt) + " attempts)";
  if (!retry_any_failure && method == "POST")
    text +=
        ". The request may or may not have arrived: check with `jobgen status` before "
        "submitting again";
  text += ". Is slurmrestd running? (URL from SLURMRESTD_URL or the profile's rest.url)";
  return std::unexpected(clean(Error{text, {}, Exit::failure}));
}

Error RestBackend::answer_error(const sys::HttpResponse& response, const RestMessages& messages,
                                const std::string& what) const {
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(clock_.now().time_since_epoch()).count();
  std::string url =
      endpoint_.unix_socket.empty() ? endpoint_.base_url : "unix:" + endpoint_.unix_socket;
  // Slurm 22.05-24.05 report a token slurmctld refused (bad signature, expired, other user) as
  // HTTP 500 with only error -1 "Unspecified error" (checked live on 22.05.8); only a request
  // without credentials gets a 401 from slurmrestd itself.
  const bool unspecified =
      !token_.token.empty() && !messages.errors.empty() &&
      std::ranges::all_of(messages.errors, [](const RestError& e) { return e.number == -1; });
  if (response.status == 401 || response.status == 403 || has_error(messages, 1007) ||
      unspecified) {
    std::string text = explain_unauthorized(token_, now, url);
    if (unspecified && response.status != 401 && response.status != 403) {
      const auto& e = messages.errors.front();
      text = "slurmrestd answered " + what + " with Slurm's unspecified error -1 (" + e.error +
             (e.description.empty() ? "" : ": " + e.description) +
             "), which is how Slurm 22.05-24.05 report a token that slurmctld refused. " + text;
    }
    return clean(Error{text, {}, Exit::auth});
  }
  std::string text =
      "slurmrestd: " + what + " failed (HTTP " + std::to_string(response.status) + ")";
  if (response.status == 404 && messages.errors.empty()) {
    text += ": the server does not serve this path" +
            std::string(dialect_ ? " for API " + std::string(dialect_->version) : "") +
            "; leave rest.api_version empty to use the version it offers";
  } else if (!messages.errors.empty()) {
    std::string errors = format_rest_errors(messages.errors);
    for (size_t p = errors.find('\n'); p != std::string::npos; p = errors.find('\n', p + 3))
      errors.insert(p + 1, "  ");
    text += ":\n  " + errors;
  } else if (!response.body.empty()) {
    text += ": " + snippet(response.body);
  }
  for (const auto& w : messages.warnings) text += "\n  warning: " + w;
  return clean(Error{text, {}, is_request_error(messages) ? Exit::invalid_input : Exit::failure});
}

Expected<RestBackend::Answer> RestBackend::get(const std::string& path, const std::string& what,
                                               bool allow_no_change) {
  auto response = send("GET", path, "", true);
  if (!response) return std::unexpected(response.error());
  RestMessages messages = decode_messages(response->body);
  Answer answer{std::move(*response), std::move(messages)};
  // "No change since update_time": HTTP 304 (22.05 for /nodes, and Slurm's master), or HTTP 500
  // with error 1900 (23.02-25.05). Both mean: keep what you have.
  if (allow_no_change && (answer.response.status == 304 || has_error(answer.messages, kNoChange))) {
    answer.response.status = 304;
    return answer;
  }
  if (answer.response.status != 200 || has_error(answer.messages, 1007))
    return std::unexpected(answer_error(answer.response, answer.messages, what));
  return answer;
}

Expected<SubmitResult> RestBackend::submit(const SubmitRequest& request) {
  if (request.test_only)
    return invalid(
        "slurmrestd has no test-only submission (sbatch --test-only): use --backend cli for "
        "--test, or submit and watch the pending reason");
  if (auto ok = prepare(); !ok) return std::unexpected(ok.error());
  SubmitBody body{request.script, config_.environment, config_.working_dir};
  // The token must never reach a job: not by name, not by value.
  std::erase_if(body.environment, [&](const auto& kv) {
    return kv.first == "SLURM_JWT" ||
           (!token_.token.empty() && kv.second.find(token_.token) != std::string::npos);
  });
  auto options = request.options;
  std::erase_if(options.environment, [&](const auto& kv) {
    return kv.first == "SLURM_JWT" ||
           (!token_.token.empty() && kv.second.find(token_.token) != std::string::npos);
  });
  std::vector<std::string> notes;
  auto json = encode_submit(*dialect_, options, body, &notes);
  if (!json) return std::unexpected(json.error());

  auto response = send("POST", api("job/submit"), *json, false);
  if (!response) return std::unexpected(response.error());
  RestMessages messages = decode_messages(response->body);
  if (response->status != 200 || has_error(messages, 1007)) {
    Error e = answer_error(*response, messages, "job submission");
    if (response->status != 401 && response->status != 403 && e.exit != Exit::auth)
      if (auto pos = e.message.find(" failed"); pos != std::string::npos)
        e.message.replace(0, pos + 7, "slurmrestd: Slurm rejected the job");
    return std::unexpected(e);
  }
  auto decoded = decode_submit(response->body);
  if (!decoded) return std::unexpected(clean(decoded.error()));
  warnings_.clear();
  for (const auto& w : decoded->messages.warnings) warnings_.push_back(redact(w, token_.token));
  SubmitResult result;
  result.job_id = decoded->job_id;
  result.message = decoded->user_message;
  for (const auto& w : warnings_) result.message += (result.message.empty() ? "" : "\n") + w;
  for (const auto& n : notes) result.message += (result.message.empty() ? "" : "\n") + n;
  result.message = redact(result.message, token_.token);
  return result;
}

Expected<std::vector<JobInfo>> RestBackend::jobs(const std::vector<std::string>& ids) {
  if (auto ok = prepare(); !ok) return std::unexpected(ok.error());
  const int64_t started =
      std::chrono::duration_cast<std::chrono::seconds>(clock_.now().time_since_epoch()).count();
  std::string path = api("jobs");
  if (jobs_update_) path += "?update_time=" + std::to_string(*jobs_update_);
  auto answer = get(path, "GET /jobs", true);
  if (!answer) return std::unexpected(answer.error());
  warnings_.clear();
  if (answer->response.status != 304) {
    auto decoded = decode_jobs(*dialect_, answer->response.body);
    if (!decoded) return std::unexpected(clean(decoded.error()));
    // With update_time, an unchanged cluster answers no jobs at all (plus a warning): keep what
    // we had. Without it, an empty list is the truth.
    if (!jobs_update_ || !decoded->jobs.empty()) {
      jobs_cache_ = std::move(decoded->jobs);
      for (const auto& w : decoded->messages.warnings) warnings_.push_back(redact(w, token_.token));
      jobs_update_ = decoded->last_update.value_or(started);
    }
  }
  std::vector<JobInfo> out;
  for (const auto& job : jobs_cache_) {
    bool wanted = ids.empty() ? (token_.user.empty() || job.info.user == token_.user)
                              : std::ranges::any_of(ids, [&](const std::string& id) {
                                  return rest_job_matches(job, id);
                                });
    if (wanted) out.push_back(job.info);
  }
  return out;
}

Expected<void> RestBackend::cancel(const std::vector<std::string>& ids) {
  if (auto ok = prepare(); !ok) return std::unexpected(ok.error());
  std::string problems;
  Exit exit = Exit::failure;
  for (const auto& id : ids) {
    if (!valid_job_id(id))
      return invalid("'" + id + "' is not a job id (expected e.g. 123 or 123_4)");
    // DELETE is safe to repeat, but only a request that never left is retried (send()).
    auto response = send("DELETE", api("job/" + id), "", false);
    if (!response) return std::unexpected(response.error());
    RestMessages messages = decode_messages(response->body);
    std::vector<RestError> real;
    for (const auto& e : messages.errors)
      if (e.number != 0) real.push_back(e);
    if (response->status == 200 && real.empty()) continue;
    Error e = answer_error(*response, RestMessages{real, messages.warnings}, "cancel " + id);
    if (e.exit == Exit::auth) return std::unexpected(e);
    if (has_error(messages, 2017)) exit = Exit::not_found;
    problems += (problems.empty() ? "" : "\n") + e.message;
  }
  if (!problems.empty()) return std::unexpected(clean(Error{problems, {}, exit}));
  return {};
}

Expected<ClusterState> RestBackend::cluster() {
  if (auto ok = prepare(); !ok) return std::unexpected(ok.error());
  const int64_t started =
      std::chrono::duration_cast<std::chrono::seconds>(clock_.now().time_since_epoch()).count();
  std::string path = api("nodes");
  if (nodes_update_) path += "?update_time=" + std::to_string(*nodes_update_);
  // 22.05-25.05 answer an unchanged node table with HTTP 500 + error 1900: not a failure.
  auto nodes = get(path, "GET /nodes", true);
  if (!nodes) return std::unexpected(nodes.error());
  if (nodes->response.status != 304) {
    auto decoded = decode_nodes(*dialect_, nodes->response.body);
    if (!decoded) return std::unexpected(clean(decoded.error()));
    if (!nodes_update_ || !decoded->empty()) {
      nodes_cache_ = std::move(*decoded);
      nodes_update_ = started;
    }
  }
  auto partitions = get(api("partitions"), "GET /partitions", false);
  if (!partitions) return std::unexpected(partitions.error());
  auto decoded = decode_partitions(*dialect_, partitions->response.body);
  if (!decoded) return std::unexpected(clean(decoded.error()));
  return ClusterState{nodes_cache_, std::move(*decoded)};
}

}  // namespace jobgen::slurm
