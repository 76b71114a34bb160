// The slurmrestd backend: Backend over HTTP (sys::HttpClient), for every API version in
// api_version.hpp.
//
// Contract:
// - The API version is the profile's (or $JOBGEN_REST_API_VERSION's) when given, else the newest
//   one the server offers that jobgen supports (GET /openapi/v3, else probing /slurm/vX/ping from
//   the newest), decided once per backend object.
// - jobs(): ONE GET /jobs per call for all ids (GET /job/{id} when exactly one plain id is asked
//   for); after the first call it sends update_time, and an empty/"no change" answer keeps the
//   previous state. An answer with Slurm errors[] is a failed query (never "no jobs").
// - Failures say their cause: Exit::auth when slurmctld refuses the token (Slurm's ambiguous error
//   -1 is resolved by one probe, see probe_fault), transient Exit::failure when it cannot be
//   reached, Error::uncertain for a submission that may have been created. cluster(): GET /nodes +
//   /partitions, with /nodes' HTTP 500 + error 1900 ("no change") read as unchanged.
// - Retries with exponential backoff only for GETs (any connection failure, 502/503/504) and for
//   requests that certainly never left (connection refused). A submission is never re-sent once
//   it may have reached the server.
// - A token never appears in anything this class returns (errors are passed through redact()),
//   nor in the submitted environment.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jobgen/profile/profile.hpp"
#include "jobgen/slurm/backend.hpp"
#include "jobgen/slurm/rest/api_version.hpp"
#include "jobgen/slurm/rest/auth.hpp"
#include "jobgen/slurm/rest/codec.hpp"
#include "jobgen/sys/bundle.hpp"
#include "jobgen/sys/http.hpp"
#include "jobgen/sys/system.hpp"

namespace jobgen::slurm {

struct RestConfig {
  std::string url;          // profile rest.url; $SLURMRESTD_URL overrides it
  std::string api_version;  // profile rest.api_version; $JOBGEN_REST_API_VERSION overrides; ""
  AuthSettings auth;
  // Sent with every submission (slurmrestd has no caller environment); never holds SLURM_JWT.
  std::map<std::string, std::string> environment;
  std::string working_dir;  // the submission's directory when the options name none
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds timeout{60000};
  int attempts = 4;                        // for retryable requests
  std::chrono::milliseconds backoff{500};  // doubled after each failed attempt
  // Every call of the Backend interface (status's query, a cancel's DELETEs, a submission) ends
  // within `budget`, retries and a silent server included; $JOBGEN_REST_TIMEOUT (seconds)
  // overrides it.
  std::chrono::milliseconds budget{30'000};
  // A longer answer is a failure, not read into memory; $JOBGEN_REST_MAX_RESPONSE_MIB overrides.
  std::size_t max_body_bytes = std::size_t{64} << 20;
};

// The environment a REST submission carries when the caller gives none: these variables from
// the caller's environment (as sbatch would export), never SLURM_JWT or other secrets.
std::map<std::string, std::string> default_submit_environment(const sys::Environment& env);

class RestBackend final : public Backend {
 public:
  RestBackend(RestConfig config, sys::HttpClient& http, const sys::Environment& env,
              const sys::FileSystem& fs, sys::Clock& clock, TokenFetcher fetch = {});
  // The same, owning its HTTP client.
  RestBackend(RestConfig config, std::unique_ptr<sys::HttpClient> http, const sys::Environment& env,
              const sys::FileSystem& fs, sys::Clock& clock, TokenFetcher fetch = {});

  std::string name() const override { return "rest"; }
  Expected<SubmitResult> submit(const SubmitRequest& request) override;
  Expected<std::vector<JobInfo>> jobs(const JobQuery& query) override;
  Expected<CancelResult> cancel(const std::vector<std::string>& ids) override;
  Expected<ClusterState> cluster() override;
  Expected<std::vector<NodeInfo>> nodes() override;
  Expected<std::vector<JobInfo>> queue() override;
  // slurmrestd serves /slurmdb/ only when it runs with its slurmdbd plugin; jobgen does not ask.
  Expected<AccountLimits> limits(const std::string& user) override;
  // Not implemented: slurmrestd serves /slurmdb/vX/jobs only with its slurmdbd plugin, and jobgen
  // does not read it yet. An error (Exit::invalid_input) saying to use the CLI backend, never an
  // empty answer that would read as "no accounting".
  Expected<Accounting> accounting(const AccountingQuery& query) override;

  // The version in use (discovering it on first use).
  Expected<const RestDialect*> dialect();
  // Slurm's warnings[] of the last answer (the "no change" notice left out).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct Answer {
    sys::HttpResponse response;
    SlurmMessages messages;
  };
  // Starts one call of the Backend interface: its deadline (RestConfig::budget) and set-up.
  Expected<void> begin_call();
  Expected<void> prepare();
  // The pinned version, else the newest the server at `url` and jobgen share.
  Expected<const RestDialect*> choose_version(const std::string& url);
  Expected<sys::HttpResponse> send(const std::string& method, const std::string& path,
                                   const std::string& body, bool retry_any_failure);
  // Error for a non-2xx answer or Slurm errors[]; `what` is e.g. "GET /jobs".
  Error answer_error(const sys::HttpResponse& response, const SlurmMessages& messages,
                     const std::string& what);
  // Why Slurm answered with only its unspecified error -1: see the .cpp.
  SlurmFault probe_fault();
  Expected<Answer> get(const std::string& path, const std::string& what, bool allow_no_change);
  // The answer as a failure (non-200, Slurm errors[]) or, with `allow_no_change`, as HTTP 304
  // when Slurm says nothing changed since update_time.
  Expected<Answer> checked(Answer answer, const std::string& what, bool allow_no_change);
  // GET of a job list, its body parsed once, jobs kept by `keep`; nullopt when nothing changed
  // (only with `allow_no_change`).
  Expected<std::optional<JobList>> get_job_list(const std::string& path, bool allow_no_change,
                                                const JobFilter& keep);
  std::string api(const std::string& tail) const;
  Error clean(Error error) const;

  RestConfig config_;
  std::unique_ptr<sys::HttpClient> owned_http_;
  sys::HttpClient& http_;
  const sys::Environment& env_;
  const sys::FileSystem& fs_;
  sys::Clock& clock_;
  TokenFetcher fetch_;

  bool prepared_ = false;
  bool limits_read_ = false;
  std::chrono::system_clock::time_point deadline_{};
  sys::Endpoint endpoint_;
  RestToken token_;
  bool token_found_ = false;
  const RestDialect* dialect_ = nullptr;
  std::vector<std::string> warnings_;

  // Monitoring state: the last full answers and when they were taken.
  std::optional<int64_t> jobs_update_;
  std::vector<JobInfo> jobs_cache_;  // the jobs cached_query_ asked for
  JobQuery cached_query_;
  std::optional<int64_t> nodes_update_;
  std::vector<NodeInfo> nodes_cache_;
};

// The backend `--backend rest` uses: the system's HTTP client (libcurl: TLS verified, the
// profile's CA bundle), the profile's rest settings (absent = URL and token from the environment
// only), the caller's environment for submissions (default_submit_environment), `scontrol token`
// through the system's runner when the profile allows it. The system must outlive the backend.
std::unique_ptr<Backend> make_rest_backend(const std::optional<profile::RestSettings>& settings,
                                           const sys::System& system, std::string working_dir);

}  // namespace jobgen::slurm
