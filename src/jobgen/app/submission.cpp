#include "jobgen/app/submission.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <random>

#include "jobgen/app/jobs.hpp"
#include "jobgen/app/run_request.hpp"
#include "jobgen/render/renderer.hpp"
#include "jobgen/render/sbatch_header.hpp"
#include "jobgen/site/request_check.hpp"
#include "jobgen/sys/process.hpp"
#include "jobgen/util/names.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/view/plan_view.hpp"

namespace jobgen::app {

std::string gres_mismatch_hint(const slurm::ClusterState& cluster, const job::SbatchOptions& sbatch,
                               const std::string& profile_name) {
  std::map<std::string, int> offered;  // gres "type:count" per node -> nodes
  bool partition_found = false;
  for (const auto& p : cluster.partitions) partition_found |= p.name == sbatch.partition;
  // "gpu:TYPE:N" or "gpu:N": what one node must offer.
  const auto parts = util::split(sbatch.gres, ':');
  const std::string asked_type = parts.size() == 3 ? std::string(parts[1]) : "";
  const int64_t asked = parts.empty() ? 0 : util::parse_int(parts.back()).value_or(0);
  bool one_offers = false;  // a node of the partition has what the job asks for
  for (const auto& node : cluster.nodes) {
    if (std::ranges::find(node.partitions, sbatch.partition) == node.partitions.end()) continue;
    int64_t of_type = 0;
    for (const auto& g : node.gpus) {
      ++offered[(g.type.empty() ? std::string("(untyped)") : g.type) + " x" +
                std::to_string(g.total)];
      if (asked_type.empty() || g.type == asked_type) of_type += g.total;
    }
    one_offers |= asked > 0 && of_type >= asked;
  }
  const std::string who = "profile '" + profile_name + "'";
  if (!partition_found && !cluster.partitions.empty()) {
    std::string names;
    for (const auto& p : cluster.partitions) names += (names.empty() ? "" : ", ") + p.name;
    return who + " names partition '" + sbatch.partition + "', which this cluster does not have (" +
           names + "): is it the profile for this cluster?";
  }
  // The partition has what was asked: the refusal is about something else (limits, QoS, time).
  if (offered.empty() || one_offers) return "";
  std::string have;
  for (const auto& [gres, nodes] : offered)
    have += (have.empty() ? "" : ", ") + gres + " on " + std::to_string(nodes) + " node(s)";
  return "the job asks for --gres=" + sbatch.gres + " per node; partition " + sbatch.partition +
         " offers gpu:" + have + " (" + who + " disagrees with the cluster?)";
}

namespace {

namespace fs = std::filesystem;

}  // namespace

std::string text_hash(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

namespace {

// A submission's tag: 64 random bits, carried in the job's comment so that a job whose id never
// reached the ledger (a submit killed or timed out after the scheduler took it) is found again.
std::string new_tag() {
  std::random_device random;
  const uint64_t bits = (uint64_t{random()} << 32) ^ random();
  return fmt::format("{:016x}", bits);
}

// Checks a profile made for another cluster, or the wrong gres names, before blaming the user.
std::string mismatch_hint(JobSession& s, const job::SbatchOptions& sbatch) {
  auto backend = s.backend();
  if (!backend) return "";
  auto cluster = (*backend)->cluster();
  if (!cluster) return "";
  return gres_mismatch_hint(*cluster, sbatch, s.cluster_name());
}

std::string profile_note(const JobSession& s) {
  return s.profile_explicit ? std::string()
                            : " (profile '" + s.cluster_name() +
                                  "': the bundled default, as neither --profile nor "
                                  "JOBGEN_PROFILE names one)";
}

// Prints what a dry run would do.
void print_dry_run(const Context& ctx, const SubmitFlags& opts, bool local, const Prepared& p,
                   const std::string& dependency, const std::string& label,
                   const std::string& script) {
  std::vector<std::string> argv{"sbatch", "--parsable"};
  if (opts.test_only) argv.emplace_back("--test-only");
  if (!dependency.empty()) {
    argv.push_back("--dependency=" + dependency);
    argv.emplace_back(job::kKillOnInvalidDep);
  }
  ctx.report.output("# " +
                    (local ? "local runner: /bin/bash SCRIPT in the background"
                           : sys::format_command(argv) + " < SCRIPT") +
                    label + " on " + p.row.label() + "\n" + script +
                    (script.ends_with('\n') ? "" : "\n"));
}

}  // namespace

Expected<std::vector<Prepared>> prepare_stages(const Context& ctx, JobSession& s, JobRequest& job,
                                               const JobRequestOptions& opts, bool local) {
  const profile::Profile& prof = *s.profile;
  const bool staged = !job.spec.stages.empty();
  // Plan, build and check every stage before submitting any: a chain is all or nothing.
  std::vector<Prepared> prepared;
  Diagnostics problems;
  for (StageRequest& st : job.stages) {
    if (!local) {
      for (auto& p : site::check_request(st.request.input.sbatch, prof, st.row.group)) {
        p.message = (staged ? "stage " + st.stage + ": " : "") + p.message +
                    " (see 'jobgen profile show " + prof.name + "')";
        problems.push_back(std::move(p));
      }
    }
    Prepared p{st.stage,
               st.row,
               std::move(st.request),
               view::plan_json(st.report),
               std::nullopt,
               request_json(opts, st)};
    if (!opts.test && st.row.total_time_s > 0) {
      p.estimate_s = static_cast<int64_t>(st.row.total_time_s / std::max(1, st.row.chain_jobs));
    }
    prepared.push_back(std::move(p));
  }
  if (!problems.empty()) {
    for (const auto& p : problems) ctx.report.problem(p);
    return fail(fmt::format("the request does not fit the {} cluster{}; nothing was submitted",
                            prof.name, profile_note(s)),
                Exit::invalid_input);
  }
  return prepared;
}

namespace {

// One submission: the stages of a job in order, each waiting for the one before.
class Submission {
 public:
  Submission(const Context& ctx, const SubmitFlags& opts, JobSession& s, JobRequest& job,
             slurm::Backend& backend, std::optional<std::string> spec_text,
             std::optional<RunInfo> run)
      : ctx_(ctx),
        opts_(opts),
        s_(s),
        job_(job),
        backend_(backend),
        spec_text_(std::move(spec_text)),
        run_(std::move(run)) {
    // The profile as submitted, read once for every stage: recovery plans retries from it
    // wherever `watch` runs.
    if (s.profile && !s.profile->source.empty()) {
      profile_path_ = fs::absolute(s.profile->source).string();
      if (auto text = ctx.fs.read_file(s.profile->source)) profile_text_ = std::move(*text);
    }
  }

  const Submitted& submitted() const { return submitted_; }

  // Renders and submits (or prints, or tests) every stage; `after` is the job the first waits for.
  Expected<void> run(std::vector<Prepared>& prepared, std::string after) {
    std::string previous = std::move(after);
    for (std::size_t i = 0; i < prepared.size(); ++i) {
      Prepared& p = prepared[i];
      job::SbatchOptions& sbatch = p.request.input.sbatch;
      if (!previous.empty()) {
        sbatch.dependency =
            "afterok:" +
            (opts_.dry_run && i > 0 ? "<job id of stage " + prepared[i - 1].stage + ">" : previous);
      }
      if (sbatch.working_dir.empty()) sbatch.working_dir = cwd_.string();
      JOBGEN_TRY_ASSIGN(const std::string script, render_stage(p, i > 0));
      const std::string label = p.stage.empty() ? "" : " (stage " + p.stage + ")";
      if (opts_.dry_run) {
        print_dry_run(ctx_, opts_, s_.backend_name == "local", p, sbatch.dependency, label, script);
        previous = "<job id>";
        continue;
      }
      make_log_dirs(sbatch);
      if (opts_.test_only) {
        JOBGEN_TRY_ASSIGN(const auto answer, backend_.submit({script, sbatch, true, {}}));
        ctx_.report.output(util::printable(answer.message) + label + "\n");
        continue;
      }
      JOBGEN_TRY_ASSIGN(previous, submit_stage(p, script, label));
    }
    if (opts_.json && !answers_.empty()) {
      nlohmann::json out = answers_.back();
      if (answers_.size() > 1) out["jobs"] = answers_;
      ctx_.report.output(out.dump() + "\n");
    }
    return {};
  }

 private:
  // A dry run shows the dependency on the command line, not in the script (the id is unknown).
  Expected<std::string> render_stage(Prepared& p, bool later_stage) {
    job::SbatchOptions& sbatch = p.request.input.sbatch;
    const std::string dependency = sbatch.dependency;
    if (opts_.dry_run && later_stage) sbatch.dependency.clear();
    auto script = render::render_script(job_.templates, p.request.input);
    sbatch.dependency = dependency;
    return script;
  }

  // Slurm opens the log files before the script runs: their directory must exist. Best effort:
  // one that cannot be made leaves Slurm to report the log it could not open.
  void make_log_dirs(const job::SbatchOptions& sbatch) const {
    if (!sbatch.output.empty())
      (void)ctx_.fs.make_directories((cwd_ / sbatch.output).parent_path());
    if (!sbatch.error.empty()) (void)ctx_.fs.make_directories((cwd_ / sbatch.error).parent_path());
  }

  // The ledger first: a job the ledger cannot record is not submitted, and a submit interrupted
  // after the scheduler took it leaves a record to reconcile (by the tag in the job's comment).
  Expected<std::string> submit_stage(const Prepared& p, const std::string& script,
                                     const std::string& label) {
    const job::SbatchOptions& sbatch = p.request.input.sbatch;
    slurm::SubmitRequest request{script, sbatch, false, new_tag()};
    const ledger::JobRecord record = intent(p, request);
    if (auto ok = ctx_.fs.write_file(record.script_path, script, 0700); !ok)
      ctx_.report.warning(ok.error().message);
    if (auto ok = s_.jobs->record_intent(record); !ok) {
      return fail("cannot record the submission in the job ledger, so nothing was submitted: " +
                  ok.error().message);
    }
    auto result = backend_.submit(request);
    if (!result) return std::unexpected(explain_failure(result.error(), request.tag, sbatch));
    if (auto ok = s_.jobs->confirm(request.tag, result->job_id); !ok) {
      return fail("job " + result->job_id +
                  " was submitted, but the ledger could not record its id (" + ok.error().message +
                  "); it is tagged jobgen:" + request.tag + ": follow it with 'jobgen status " +
                  result->job_id + "'");
    }
    if (!result->message.empty()) ctx_.report.note(util::printable(result->message));
    submitted_.emplace_back(p.stage, result->job_id);
    announce(p, record, result->job_id, label);
    return result->job_id;
  }

  ledger::JobRecord intent(const Prepared& p, const slurm::SubmitRequest& request) const {
    const job::SbatchOptions& sbatch = request.options;
    const profile::Profile& prof = *s_.profile;
    ledger::JobRecord record;
    record.backend = s_.backend_name;
    record.cluster = prof.name;
    record.target = p.row.group;
    record.job_name = sbatch.job_name;
    record.spec_path = fs::absolute(opts_.jobspec).string();
    record.spec_hash = spec_text_ ? text_hash(*spec_text_) : "";
    record.spec_text = spec_text_.value_or("");
    record.profile_path = profile_path_;
    record.profile_text = profile_text_;
    record.script_path =
        (s_.state.scripts() /
         fmt::format("{}-{}-{}-{}{}.sh", s_.backend_name, prof.name,
                     util::sanitize_job_name(sbatch.job_name), request.tag,
                     p.stage.empty() ? "" : "-" + util::sanitize_job_name(p.stage)))
            .string();
    record.plan_json = p.plan.dump();
    record.submit_time = unix_now(ctx_);
    record.last_state = ledger::kSubmitting;
    record.stdout_path = sbatch.output;
    record.stderr_path = sbatch.error;
    record.work_dir = sbatch.working_dir;
    record.estimated_runtime_s = p.estimate_s;
    // For "measured vs planned step time" in status/watch, and for `jobgen calibrate` (no
    // estimate: a --test run, whose steps are not the plan's).
    if (p.estimate_s && p.row.step_time_s > 0) record.planned_step_time_s = p.row.step_time_s;
    if (p.row.steps > 0) record.planned_steps = p.row.steps;
    record.plan_row = p.row.id;
    record.array_size = render::sweep_task_count(job_.sweep);
    record.tag = request.tag;
    record.run_id = run_ ? run_->run_id : request.tag;
    record.attempt = run_ ? run_->attempt : 1;
    record.max_attempts = run_                        ? run_->max_attempts
                          : job_.spec.recover.enabled ? job_.spec.recover.max_attempts
                                                      : 0;
    record.request_json = p.request_json;
    return record;
  }

  Error explain_failure(Error error, const std::string& tag, const job::SbatchOptions& sbatch) {
    if (error.uncertain) {
      error.message +=
          "\n  The scheduler may have created the job anyway: it is tagged jobgen:" + tag +
          ", and 'jobgen status' will find it if it exists";
    } else if (auto ok = s_.jobs->forget_intent(tag); !ok) {
      ctx_.report.warning(ok.error().message);
    }
    if (error.exit == Exit::invalid_input) {
      if (const std::string hint = mismatch_hint(s_, sbatch); !hint.empty())
        error.message += "\n  " + hint;
      error.message += profile_note(s_);
    }
    if (!submitted_.empty()) {
      error.message += "\n  Stages submitted before the failure:";
      for (const auto& [stage, id] : submitted_) error.message += " " + stage + "=" + id;
      error.message += " (cancel them with 'jobgen cancel')";
    }
    return error;
  }

  void announce(const Prepared& p, const ledger::JobRecord& record, const std::string& id,
                const std::string& label) {
    if (opts_.quiet) return;
    if (opts_.json) {
      nlohmann::json entry{{"job_id", id}, {"target", p.row.group}, {"script", record.script_path}};
      // --target auto: when it was expected to start and finish (plan/queue.hpp).
      if (p.row.start && p.plan.contains("queue")) {
        entry["start"] = view::start_json(p.row, p.plan["queue"].value("time", int64_t{0}));
        entry["finish_in_s"] = p.row.finish_in_s ? nlohmann::json(*p.row.finish_in_s) : nullptr;
        entry["run_time_s"] = p.row.total_time_s;
      }
      if (!p.stage.empty()) entry["stage"] = p.stage;
      if (record.array_size > 0) entry["array_size"] = record.array_size;
      answers_.push_back(entry);
      return;
    }
    ctx_.report.output(id + "\n");
    ctx_.report.note(
        "submitted job " + id + label + " on " + p.row.label() +
        (record.array_size > 0 ? fmt::format(" ({} array tasks)", record.array_size) : "") +
        "; follow it with 'jobgen watch " + id + "'");
  }

  const Context ctx_;
  const SubmitFlags& opts_;
  JobSession& s_;
  JobRequest& job_;
  slurm::Backend& backend_;
  std::optional<std::string> spec_text_;
  std::string profile_path_;
  std::string profile_text_;
  std::optional<RunInfo> run_;
  const fs::path cwd_ = fs::current_path();
  Submitted submitted_;  // stage, job id
  nlohmann::json answers_ = nlohmann::json::array();
};

}  // namespace

Expected<Submitted> submit_stages(const Context& ctx, const SubmitFlags& flags, JobSession& s,
                                  JobRequest& job, slurm::Backend& backend,
                                  std::optional<std::string> spec_text,
                                  std::vector<Prepared>& prepared, std::string after,
                                  std::optional<RunInfo> run) {
  Submission submission(ctx, flags, s, job, backend, std::move(spec_text), std::move(run));
  JOBGEN_TRY(submission.run(prepared, std::move(after)));
  return submission.submitted();
}

}  // namespace jobgen::app
