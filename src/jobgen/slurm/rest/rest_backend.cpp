#include "jobgen/slurm/rest/rest_backend.hpp"

#include "jobgen/util/bounded_json.hpp"
#include "jobgen/util/redact.hpp"
#include "jobgen/util/slurm_time.hpp"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

namespace {

constexpr int kNoChange = 1900;  // SLURM_NO_CHANGE_IN_DATA

constexpr int kInvalidJobId = 2017;  // ESLURM_INVALID_JOB_ID

bool has_error(const SlurmMessages& m, int number) {
  return std::ranges::any_of(m.errors,
                             [&](const SlurmError& e) { return slurm_error_number(e) == number; });
}

// Errors that mean "the request itself is wrong", not "something failed".
bool is_request_error(const SlurmMessages& m) {
  constexpr std::array kNumbers{2000, 2014, 2072, 2051, 2045, 2066, 2081};
  return std::ranges::any_of(m.errors, [&](const SlurmError& e) {
    return std::ranges::find(kNumbers, slurm_error_number(e)) != kNumbers.end();
  });
}

bool plain_number(std::string_view id) {
  return !id.empty() && std::ranges::all_of(id, [](char c) { return c >= '0' && c <= '9'; });
}

// A JSON object carrying Slurm's "errors" list: how every slurmrestd version answers.
bool slurm_envelope(std::string_view body) {
  const auto doc = util::parse_bounded(body);
  if (!doc.is_object()) return false;
  const auto errors = doc.find("errors");
  return errors != doc.end() && errors->is_array();
}

Error transient(Error error) {
  error.transient = true;
  return error;
}

std::string snippet(std::string_view body) {
  std::string s = util::printable(util::trim(body.substr(0, 300)), 300);
  return s;
}

}  // namespace

Expected<sys::HttpResponse> RestBackend::send(const std::string& method, const std::string& path,
                                              const std::string& body, bool retry_any_failure) {
  sys::HttpRequest request;
  request.method = method;
  request.url = endpoint_.base_url + path;
  request.unix_socket = endpoint_.unix_socket;
  request.max_body_bytes = config_.max_body_bytes;
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
  bool out_of_time = false;
  bool refused = false;  // an answer jobgen will not take (over the size limit)
  for (;; ++attempt) {
    // Each attempt gets what is left of the call's budget (RestConfig::budget), at most its own.
    using std::chrono::milliseconds;
    const auto left = std::chrono::duration_cast<milliseconds>(deadline_ - clock_.now());
    if (left < milliseconds(50)) {
      out_of_time = true;
      if (last.empty()) last = "no time left";
      break;
    }
    request.timeout = std::min(config_.timeout, left);
    request.connect_timeout = std::min(config_.connect_timeout, left);
    auto result = http_.send(request);
    if (result) {
      const long s = result->status;
      if (!(retry_any_failure && (s == 502 || s == 503 || s == 504) && attempt < attempts))
        return std::move(*result);
      last = "HTTP " + std::to_string(s);
    } else {
      last = result.error().message;
      if (!retry_any_failure && result.error().maybe_sent) break;  // never re-send a POST
      if (!result.error().repeatable) {
        refused = true;
        break;
      }
    }
    if (attempt >= attempts) break;
    if (clock_.now() + delay >= deadline_) {
      out_of_time = true;
      break;
    }
    clock_.sleep_for(delay);
    delay *= 2;
  }
  std::string where = endpoint_.unix_socket.empty() ? util::redact_url(endpoint_.base_url)
                                                    : "unix:" + endpoint_.unix_socket;
  // The call is named by jobgen's own API path: the base URL's path may hold a secret.
  std::string text = (refused ? "slurmrestd at " : "cannot reach slurmrestd at ") + where + " (" +
                     method + " " + path + "): " + util::redact_urls_in(last);
  if (attempt > 1) text += " (" + std::to_string(attempt) + " attempts)";
  if (out_of_time || clock_.now() >= deadline_)
    text += "; it did not answer within " +
            util::format_duration(std::chrono::duration<double>(config_.budget).count(),
                                  util::DurationStyle::whole) +
            ", the limit of one request (JOBGEN_REST_TIMEOUT=SECONDS sets it)";
  if (!retry_any_failure && method == "POST")
    text +=
        ". The request may or may not have arrived: check with `jobgen status` before "
        "submitting again";
  if (!refused)
    text += ". Is slurmrestd running? (URL from SLURMRESTD_URL or the profile's rest.url)";
  Error error{text, {}, Exit::failure};
  error.transient = true;
  return std::unexpected(clean(std::move(error)));
}

SlurmFault RestBackend::probe_fault() {
  // Slurm 22.05-24.05 answer a refused token, a down and a frozen slurmctld alike (HTTP 500, error
  // -1) for GETs; cancelling job 0 (which never exists) names the cause: 2017 reachable and
  // authorised, 5005 token refused, 1800/5004 controller unreachable.
  auto response = send("DELETE", api("job/0"), "", false);
  if (!response) return SlurmFault::unreachable;
  if (response->status == 401 || response->status == 403) return SlurmFault::auth;
  const SlurmMessages messages = decode_messages(response->body);
  if (has_error(messages, kInvalidJobId)) return SlurmFault::none;
  return classify_errors(messages.errors);
}

Error RestBackend::answer_error(const sys::HttpResponse& response, const SlurmMessages& messages,
                                const std::string& what) {
  const int64_t now = util::unix_seconds(clock_.now());
  const std::string url = endpoint_.unix_socket.empty() ? util::redact_url(endpoint_.base_url)
                                                        : "unix:" + endpoint_.unix_socket;
  SlurmFault fault = classify_errors(messages.errors);
  if (response.status == 401 || response.status == 403) fault = SlurmFault::auth;
  const bool unspecified =
      !messages.errors.empty() &&
      std::ranges::all_of(messages.errors, [](const SlurmError& e) { return e.number == -1; });
  if (fault == SlurmFault::ambiguous && (unspecified || !is_request_error(messages)) &&
      !messages.errors.empty() && dialect_ != nullptr)
    fault = probe_fault();
  if (fault == SlurmFault::auth) {
    std::string text = explain_unauthorized(token_, now, url);
    if (response.status != 401 && response.status != 403)
      text = "slurmrestd: " + what + ": slurmctld refused the credentials. " + text;
    return clean(Error{text, {}, Exit::auth});
  }
  std::string text =
      "slurmrestd: " + what + " failed (HTTP " + std::to_string(response.status) + ")";
  if (response.status == 404 && messages.errors.empty()) {
    text += ": the server does not serve this path" +
            std::string(dialect_ ? " for API " + std::string(dialect_->version) : "") +
            "; leave rest.api_version empty to use the version it offers";
  } else if (!messages.errors.empty()) {
    std::string errors = format_slurm_errors(messages.errors);
    for (size_t p = errors.find('\n'); p != std::string::npos; p = errors.find('\n', p + 3))
      errors.insert(p + 1, "  ");
    text += ":\n  " + errors;
  } else if (!response.body.empty()) {
    text += ": " + snippet(response.body);
  }
  if (fault == SlurmFault::unreachable)
    text +=
        "\n  (slurmctld cannot be reached or did not answer in time: it is down, frozen or "
        "restarting; try again)";
  for (const auto& w : messages.warnings) text += "\n  warning: " + util::printable(w, 500);
  Error error{text, {}, is_request_error(messages) ? Exit::invalid_input : Exit::failure};
  error.transient =
      error.exit == Exit::failure &&
      (fault != SlurmFault::none || response.status >= 500 || messages.errors.empty());
  return clean(std::move(error));
}

// A 1,000-job queue is 3 MB of JSON: the messages come from the pass that decodes the jobs
// (parsing it a second time for errors[] alone was a third of `plan --queue`).
Expected<std::optional<JobList>> RestBackend::get_job_list(const std::string& path,
                                                           bool allow_no_change,
                                                           const JobFilter& keep) {
  JOBGEN_TRY_ASSIGN(auto response, send("GET", path, "", true));
  if (response.status != 200) {  // no list: what the (small) answer says is the error
    SlurmMessages messages = decode_messages(response.body);
    auto answer =
        checked(Answer{std::move(response), std::move(messages)}, "GET /jobs", allow_no_change);
    if (!answer) return std::unexpected(answer.error());
    return std::nullopt;  // only "unchanged" passes with a status other than 200
  }
  auto list = decode_job_list(response.body, "GET /jobs", keep);
  if (!list) return std::unexpected(transient(clean(list.error())));
  JOBGEN_TRY_ASSIGN(auto answer, checked(Answer{std::move(response), list->messages}, "GET /jobs",
                                         allow_no_change));
  if (answer.response.status == 304) return std::nullopt;
  return list;
}

Expected<RestBackend::Answer> RestBackend::get(const std::string& path, const std::string& what,
                                               bool allow_no_change) {
  JOBGEN_TRY_ASSIGN(auto response, send("GET", path, "", true));
  SlurmMessages messages = decode_messages(response.body);
  return checked(Answer{std::move(response), std::move(messages)}, what, allow_no_change);
}

Expected<RestBackend::Answer> RestBackend::checked(Answer answer, const std::string& what,
                                                   bool allow_no_change) {
  // "No change since update_time": HTTP 304 (22.05 for /nodes, and Slurm's master), or HTTP 500
  // with error 1900 (23.02-25.05). Both mean: keep what you have.
  if (allow_no_change && (answer.response.status == 304 || has_error(answer.messages, kNoChange))) {
    answer.response.status = 304;
    return answer;
  }
  // An answer with Slurm errors is a failed query, whatever its HTTP status: 22.05 sends HTTP 500
  // and an empty list when slurmctld is down, later versions may send 200.
  if (answer.response.status != 200 || !answer.messages.errors.empty())
    return std::unexpected(answer_error(answer.response, answer.messages, what));
  return answer;
}

Expected<SubmitResult> RestBackend::submit(const SubmitRequest& request) {
  if (request.test_only)
    return invalid(
        "slurmrestd has no test-only submission (sbatch --test-only): use --backend cli for "
        "--test-only, or submit and watch the pending reason");
  JOBGEN_TRY(begin_call());
  SubmitBody body{request.script, config_.environment, config_.working_dir,
                  request.tag.empty() ? std::string() : tag_comment(request.tag)};
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
  JOBGEN_TRY_ASSIGN(auto json, encode_submit(*dialect_, options, body, &notes));

  auto response = send("POST", api("job/submit"), json, false);
  if (!response) {
    Error e = response.error();
    e.uncertain = true;  // send() fails a POST only once it may have arrived
    return std::unexpected(e);
  }
  const SlurmMessages messages = decode_messages(response->body);
  if (response->status != 200 || !messages.errors.empty()) {
    Error e = answer_error(*response, messages, "job submission");
    // A timed-out submission may still be created once slurmctld gets to it (seen on 22.05).
    e.uncertain = has_error(messages, 5004) || response->status >= 502;
    if (response->status != 401 && response->status != 403 && e.exit != Exit::auth &&
        !e.uncertain && classify_errors(messages.errors) == SlurmFault::ambiguous)
      if (auto pos = e.message.find(" failed"); pos != std::string::npos)
        e.message.replace(0, pos + 7, "slurmrestd: Slurm rejected the job");
    return std::unexpected(e);
  }
  auto decoded = decode_submit(response->body);
  if (!decoded) {
    Error e = clean(decoded.error());
    e.uncertain = true;  // HTTP 200 without a readable id: a job may exist
    return std::unexpected(e);
  }
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

Expected<std::vector<JobInfo>> RestBackend::jobs(const JobQuery& query) {
  for (const auto& id : query.ids) {
    if (!is_slurm_job_id(id))
      return invalid("'" + util::printable(id, 80) +
                     "' is not a Slurm job id (expected e.g. 123 or 123_4)");
  }
  JOBGEN_TRY(begin_call());
  const auto keep = [&](const JobInfo& job) {
    if (query.empty()) return token_.user.empty() || job.user == token_.user;
    if (std::ranges::any_of(query.ids, [&](const std::string& id) { return matches_id(job, id); }))
      return true;
    const std::string tag = tag_of(job);
    return !tag.empty() && std::ranges::find(query.tags, tag) != query.tags.end();
  };
  // One job: ask for it alone (a 20,000-job queue is not downloaded to find one).
  if (query.tags.empty() && query.ids.size() == 1 && plain_number(query.ids.front())) {
    JOBGEN_TRY_ASSIGN(auto response, send("GET", api("job/" + query.ids.front()), "", true));
    const SlurmMessages messages = decode_messages(response.body);
    if (has_error(messages, kInvalidJobId) && messages.errors.size() == 1)
      return std::vector<JobInfo>{};  // Slurm says it does not know the job
    if (response.status != 200 || !messages.errors.empty())
      return std::unexpected(answer_error(response, messages, "GET /job/" + query.ids.front()));
    auto list = decode_job_list(response.body, "GET /job/" + query.ids.front(), keep);
    if (!list) return std::unexpected(transient(clean(list.error())));
    return std::move(list->jobs);
  }
  const int64_t started = util::unix_seconds(clock_.now());
  // update_time only while the same jobs are asked for: the cache holds just those.
  const bool same_query =
      jobs_update_ && cached_query_.ids == query.ids && cached_query_.tags == query.tags;
  std::string path = api("jobs");
  if (same_query)
    path += "?update_time=" + std::string(dialect_->update_time_uts ? "uts" : "") +
            std::to_string(*jobs_update_);
  // Jobs are filtered while the document is parsed: a 20,000-job queue is never held as JSON,
  // and only the jobs asked for are kept.
  std::size_t listed = 0;
  auto decoded = get_job_list(path, same_query, [&](const JobInfo& job) {
    ++listed;
    return keep(job);
  });
  if (!decoded) return std::unexpected(decoded.error());
  warnings_.clear();
  if (*decoded) {
    // With update_time, an unchanged cluster answers no jobs at all (plus a warning): keep what
    // we had. Without it, an empty list is the truth.
    if (!same_query || listed > 0) {
      jobs_cache_ = std::move((*decoded)->jobs);
      cached_query_ = query;
      for (const auto& w : (*decoded)->messages.warnings)
        warnings_.push_back(redact(w, token_.token));
      jobs_update_ = (*decoded)->last_update.value_or(started);
    }
  }
  return jobs_cache_;
}

Expected<CancelResult> RestBackend::cancel(const std::vector<std::string>& ids) {
  for (const auto& id : ids) {
    if (!is_slurm_job_id(id))
      return invalid("'" + util::printable(id, 80) +
                     "' is not a Slurm job id (expected e.g. 123 or 123_4)");
  }
  JOBGEN_TRY(begin_call());
  std::string problems;
  std::vector<std::string> accepted;
  std::vector<std::string> unknown;
  for (const auto& id : ids) {
    // DELETE is safe to repeat, but only a request that never left is retried (send()).
    JOBGEN_TRY_ASSIGN(auto response, send("DELETE", api("job/" + id), "", false));
    const SlurmMessages messages = decode_messages(response.body);
    std::vector<SlurmError> real;
    for (const auto& e : messages.errors)
      if (e.number != 0 || !e.error.empty()) real.push_back(e);
    // slurmrestd confirms with its usual envelope ("errors": [] at least); "{}" or "OK" from
    // something in between confirms nothing.
    const bool json_answer = slurm_envelope(response.body);
    if (response.status == 200 && real.empty() && json_answer) {
      accepted.push_back(id);
      continue;
    }
    if (has_error(messages, kInvalidJobId) && real.size() == 1) {
      unknown.push_back(id);
      continue;
    }
    if (response.status == 200 && !json_answer) {
      problems += (problems.empty() ? "" : "\n") +
                  std::string("slurmrestd answered the cancellation of ") + id +
                  " with something that is not a Slurm answer (" +
                  (response.body.empty() ? std::string("an empty body") : snippet(response.body)) +
                  "): whether it was cancelled is unknown";
      continue;
    }
    Error e = answer_error(response, SlurmMessages{real, messages.warnings}, "cancel " + id);
    if (e.exit == Exit::auth) return std::unexpected(e);
    problems += (problems.empty() ? "" : "\n") + e.message;
  }
  if (!problems.empty()) return std::unexpected(clean(Error{problems, {}, Exit::failure}));
  return CancelResult{std::move(accepted), std::move(unknown)};
}

Expected<std::vector<NodeInfo>> RestBackend::nodes() {
  JOBGEN_TRY(begin_call());
  JOBGEN_TRY_ASSIGN(auto answer, get(api("nodes"), "GET /nodes", false));
  auto decoded = decode_node_list(answer.response.body, "GET /nodes");
  if (!decoded) return std::unexpected(transient(clean(decoded.error())));
  return decoded;
}

Expected<Accounting> RestBackend::accounting(const AccountingQuery& query) {
  (void)query;
  return invalid(
      "report needs sacct: the rest backend does not read Slurm accounting (slurmrestd serves "
      "/slurmdb/ only with its slurmdbd plugin); run 'jobgen report --backend cli' on a machine "
      "where sacct works");
}

Expected<std::vector<JobInfo>> RestBackend::queue() {
  JOBGEN_TRY(begin_call());
  // Not through jobs()'s update_time cache: that one holds only the jobs it was asked for.
  auto decoded = get_job_list(api("jobs"), false, [](const JobInfo& job) {
    return job.state == JobState::pending || job.state == JobState::running ||
           job.state == JobState::completing;
  });
  if (!decoded) return std::unexpected(decoded.error());
  if (!*decoded) return fail("GET /jobs: no list in the answer");  // not without update_time
  return std::move((*decoded)->jobs);
}

Expected<ClusterState> RestBackend::cluster() {
  JOBGEN_TRY(begin_call());
  const int64_t started = util::unix_seconds(clock_.now());
  std::string path = api("nodes");
  if (nodes_update_ && dialect_->nodes_since)
    path += "?update_time=" + std::to_string(*nodes_update_);
  // An unchanged node table: HTTP 304 or 500 + error 1900 (22.05), not a failure.
  auto nodes = get(path, "GET /nodes", true);
  if (!nodes) return std::unexpected(nodes.error());
  if (nodes->response.status != 304) {
    auto decoded = decode_node_list(nodes->response.body, "GET /nodes");
    if (!decoded) return std::unexpected(transient(clean(decoded.error())));
    if (!nodes_update_ || !decoded->empty()) {
      nodes_cache_ = std::move(*decoded);
      nodes_update_ = started;
    }
  }
  auto partitions = get(api("partitions"), "GET /partitions", false);
  if (!partitions) return std::unexpected(partitions.error());
  auto decoded = decode_partition_list(partitions->response.body, "GET /partitions");
  if (!decoded) return std::unexpected(transient(clean(decoded.error())));
  return ClusterState{nodes_cache_, std::move(*decoded)};
}

Expected<AccountLimits> RestBackend::limits(const std::string& user) {
  (void)user;
  return fail(
      "limits not available over slurmrestd in this version of jobgen (its /slurmdb/ endpoints "
      "are not used): plan with --backend cli to check association and QOS limits",
      Exit::invalid_input);
}

}  // namespace jobgen::slurm
