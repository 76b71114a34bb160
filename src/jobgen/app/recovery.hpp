// Recovery in `jobgen watch` (the policy is run/recovery.hpp): after each poll, every attempt that
// ended without success (a COMPLETED one too when its training stopped at the checkpoint signal
// rather than finishing: its log tail is read once) and belongs to a run
// recovery applies to (the job spec said `recover:` so the ledger recorded an attempt limit, or
// `watch --recover`) is classified from the tail of its logs and its final state (run/failure.hpp);
// the policy decides, and a retry goes through the submit path (submission.hpp) as the run's next
// attempt. The failed attempt's ledger row records its failure and the decision, which also marks
// it handled (it is never handled twice). A retry the scheduler did not take for a reason that
// passes (it did not answer) ends nothing: the attempt is handled again at the next poll, or, when
// the scheduler may have created the job (a submission that timed out), the watch follows the
// retry by its tag. Evidence only: a view counts when the scheduler or an
// exit marker says how the job ended; a vanished job, an array task and a failed query (the caller
// never passes one) trigger nothing.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "jobgen/app/session.hpp"

namespace jobgen::app {

struct RecoverySettings {
  bool forced = false;   // --recover: every run, not only those whose job spec asks for it
  int max_attempts = 0;  // --max-attempts; 0 = the recorded limit, else spec::kDefaultMaxAttempts
};

// A retry submitted for a failed attempt: the watch follows `next` instead of `failed_id`.
struct Retry {
  std::string failed_id;
  slurm::Tracked next;
};

// Ended attempts a watch has already looked at and that need nothing more (finished, handled, or
// outside recovery): later polls skip them without asking the ledger or reading their logs.
using SettledAttempts = std::set<std::string>;

// Reports each decision on ctx.err ("jobgen: job 7 (attempt 1/3): GPU out of memory ...").
// `settled` is kept by the caller across polls.
std::vector<Retry> recover_failed(const Context& ctx, JobSession& session,
                                  const std::vector<slurm::JobView>& views,
                                  const RecoverySettings& settings, SettledAttempts& settled);

}  // namespace jobgen::app
