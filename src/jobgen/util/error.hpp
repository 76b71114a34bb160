// Errors at module boundaries. Every fallible boundary returns Expected<T>; the CLI layer is the
// only place that prints an Error (format_error) and turns it into an exit code.
//
// Contract: `where.line` and `where.col` are 1-based; 0 means "unknown" and is left out of the
// message. `message` says what is wrong and, where jobgen knows, how to fix it.
#pragma once

#include <expected>
#include <string>
#include <vector>

namespace jobgen {

// Documented in README.md ("Exit codes"). Keep the two in step.
enum class Exit : int {
  ok = 0,
  failure = 1,        // runtime failure: a command, the network or Slurm failed
  invalid_input = 2,  // a profile, job spec, template or argument is wrong
  not_found = 3,      // a job, profile or file that was asked for does not exist
  jobs_failed = 4,    // watch/status: at least one job ended in a state other than COMPLETED
  auth = 5,           // slurmrestd refused the credentials (missing, expired or rejected token)
};

struct SourceLoc {
  std::string file;  // path as the user gave it; empty when the error is not about a file
  int line = 0;      // 1-based; 0 = unknown
  int col = 0;       // 1-based; 0 = unknown
};

struct Error {
  std::string message;
  SourceLoc where;
  Exit exit = Exit::failure;
  // The cause may pass if the same request is made again later (the scheduler unreachable or
  // frozen, a timeout, a garbled answer): `watch` keeps polling instead of giving up.
  bool transient = false;
  // A request with effects (a submission) may have taken effect although it failed (it timed out
  // after it was sent): never repeat it blindly, reconcile instead.
  bool uncertain = false;
  // The other problems found with this one (every mistake of a file), each printed on its own
  // line after it, with its own place.
  std::vector<Error> more = {};
};

template <class T>
using Expected = std::expected<T, Error>;

// A list of problems, for validators that report everything they find instead of the first.
using Diagnostics = std::vector<Error>;

// Every problem as one invalid-input error: the first, with the others in `more`. `problems` must
// not be empty.
Error all_problems(Diagnostics problems);

inline std::unexpected<Error> fail(std::string message, Exit exit = Exit::failure,
                                   SourceLoc where = {}) {
  return std::unexpected<Error>(Error{std::move(message), std::move(where), exit});
}

inline std::unexpected<Error> invalid(std::string message, SourceLoc where = {}) {
  return fail(std::move(message), Exit::invalid_input, std::move(where));
}

// A runtime failure that may pass on its own (Error::transient).
inline std::unexpected<Error> transient_failure(std::string message) {
  Error error{std::move(message), {}, Exit::failure};
  error.transient = true;
  return std::unexpected<Error>(std::move(error));
}

// Error propagation at boundaries:
//   JOBGEN_TRY(expr);                   // Expected<void>: return its error, if any
//   JOBGEN_TRY_ASSIGN(auto x, expr);    // Expected<T>: return its error, else x = the value
// Both return std::unexpected(error) from the enclosing function, whose return type must be an
// Expected<...>.
#define JOBGEN_CONCAT_IMPL(a, b) a##b
#define JOBGEN_CONCAT(a, b) JOBGEN_CONCAT_IMPL(a, b)
#define JOBGEN_TRY(expr)                                      \
  do {                                                        \
    if (auto&& jobgen_try_ = (expr); !jobgen_try_)            \
      return std::unexpected(std::move(jobgen_try_).error()); \
  } while (false)
#define JOBGEN_TRY_ASSIGN(decl, expr)                                                \
  auto&& JOBGEN_CONCAT(jobgen_try_, __LINE__) = (expr);                              \
  if (!JOBGEN_CONCAT(jobgen_try_, __LINE__))                                         \
    return std::unexpected(std::move(JOBGEN_CONCAT(jobgen_try_, __LINE__)).error()); \
  decl = std::move(*JOBGEN_CONCAT(jobgen_try_, __LINE__)) /* NOLINT(bugprone-macro-parentheses) */

// "jobgen: error: FILE:LINE:COL: message" (the location parts that are known).
std::string format_error(const Error& error);

// Levenshtein-closest candidate within a small distance, for "did you mean" hints; "" if none.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace jobgen
