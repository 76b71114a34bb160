// The one submission path, shared by `jobgen submit` and a retry of `jobgen watch`'s recovery
// (app/recovery.hpp), so that every check a submission makes is made for a retry too. In order:
//  1. the job spec's text, read once (a retry's: the run's stored text), --set values in place:
//     what is planned is what the run stores;
//  2. build_job_request: plan each stage and choose its row (--target auto asks the queue);
//  3. the profile's drift from the live cluster: what the queue saw is remembered, a known drift
//     about the chosen groups is warned about;
//  4. the checkpoints' storage (check_checkpoint_storage): quota and free space;
//  5. a local launch's pre-flight (preflight_local): free GPUs, data paths;
//  6. prepare_stages: every stage's request against the profile (site/request_check.hpp);
//  7. --after: the job waited for exists and can still succeed;
//  8. submit_stages: the ledger's intent, the scheduler, the confirmation.
// A retry skips none of them; it differs only in what it submits (the attempt's settings, the
// run it continues, the failed attempt's working directory) and in saying nothing itself
// (recovery reports the decision in its own words).
#pragma once

#include <optional>
#include <string>

#include "jobgen/app/job_request.hpp"
#include "jobgen/app/session.hpp"
#include "jobgen/app/submission.hpp"

namespace jobgen::app {

struct SubmitRequest {
  JobRequestOptions request;
  SubmitFlags flags;
  std::string after;           // --after: the job the first stage waits for
  std::optional<RunInfo> run;  // a retry: the run it is the next attempt of
  std::string working_dir;     // a retry: the failed attempt's; "" = here
  std::string backend;         // a retry: the backend that ran the run; "" = the session's
};

// --after's own form, checked before anything else (a --dry-run too): one job id (123, 123_4),
// never 0 (Slurm has no job 0) nor a dependency expression (jobgen always asks for afterok).
Expected<void> check_after_id(const std::string& after);

// Runs the steps above through the session's backend. Returns (stage, job id) of every
// submitted stage (none for --dry-run and --test-only).
Expected<Submitted> submit(const Context& ctx, JobSession& session, const SubmitRequest& request);

}  // namespace jobgen::app
