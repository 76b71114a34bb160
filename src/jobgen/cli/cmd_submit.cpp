// `jobgen submit [JOBSPEC] --target T [--backend B] [--dry-run] [--test] [--test-only]
//  [--sweep k=v1,v2]... [--after JOBID] [--json]`: plans the job spec, renders the script (as
// `jobgen render` does, through cli/job_request.hpp), checks the request against the
// profile (slurm/request_check.hpp) before anything reaches the scheduler, submits, records the
// job in the ledger and prints its id. Stages become an afterok chain (each stage waits for the
// previous one; --after JOBID makes the first wait too); a sweep is ONE job array submission.
// Scripts are kept under <state dir>/scripts/. --dry-run prints the scripts and the commands and
// submits nothing; --test-only asks the scheduler when the job would start.
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_backend.hpp"
#include "jobgen/cli/job_request.hpp"
#include "jobgen/plan/report.hpp"
#include "jobgen/render/renderer.hpp"
#include "jobgen/render/sbatch_header.hpp"
#include "jobgen/slurm/request_check.hpp"
#include "jobgen/sys/process.hpp"

namespace jobgen::cli {

namespace {

namespace fs = std::filesystem;

struct SubmitOptions {
  JobCommandOptions common;
  JobRequestOptions request;
  bool test_only = false;
  bool dry_run = false;
  bool json = false;
  std::string after;
};

// FNV-1a 64: identifies the job spec text a job was submitted from.
std::string text_hash(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

struct Prepared {
  std::string stage;
  plan::PlanRow row;
  render::RenderRequest request;
  nlohmann::ordered_json plan;
  std::optional<int64_t> estimate_s;
};

Expected<Exit> run_submit(Context& ctx, const SubmitOptions& opts) {
  auto spec_text = ctx.fs.read_file(opts.request.jobspec);
  auto session = open_job_session(ctx, opts.common, true);
  if (!session) return std::unexpected(session.error());
  JobSession& s = **session;
  const profile::Profile& prof = *s.profile;
  const bool local = s.backend_name == "local";
  auto job = build_job_request(ctx, opts.request, prof, *s.catalog, local);
  if (!job) return std::unexpected(job.error());
  const bool staged = !job->spec.stages.empty();

  // Plan, build and check every stage before submitting any: a chain is all or nothing.
  std::vector<Prepared> prepared;
  Diagnostics problems;
  for (StageRequest& st : job->stages) {
    if (!local) {
      for (auto& p : slurm::check_request(st.request.input.sbatch, prof, st.row.group)) {
        p.message = (staged ? "stage " + st.stage + ": " : "") + p.message +
                    " (see 'jobgen profile show " + prof.name + "')";
        problems.push_back(std::move(p));
      }
    }
    Prepared p{st.stage, st.row, std::move(st.request), plan::plan_json(st.report), std::nullopt};
    if (!opts.request.test && st.row.total_time_s > 0) {
      p.estimate_s = static_cast<int64_t>(st.row.total_time_s / std::max(1, st.row.chain_jobs));
    }
    prepared.push_back(std::move(p));
  }
  if (!problems.empty()) {
    for (const auto& p : problems) report(ctx, p);
    return fail(
        fmt::format("the request does not fit the {} cluster; nothing was submitted", prof.name),
        Exit::invalid_input);
  }

  const fs::path cwd = fs::current_path();
  std::vector<std::pair<std::string, std::string>> submitted;  // stage, job id
  std::string previous = opts.after;
  nlohmann::json answers = nlohmann::json::array();
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    Prepared& p = prepared[i];
    render::SbatchOptions& sbatch = p.request.input.sbatch;
    if (!previous.empty()) {
      sbatch.dependency =
          "afterok:" +
          (opts.dry_run && i > 0 ? "<job id of stage " + prepared[i - 1].stage + ">" : previous);
    }
    if (sbatch.working_dir.empty()) sbatch.working_dir = cwd.string();
    // A dry run shows the dependency on the command line (the id is not known yet).
    const std::string dependency = sbatch.dependency;
    if (opts.dry_run && i > 0) sbatch.dependency.clear();
    auto script = render::render_script(job->templates, p.request.input);
    if (!script) return std::unexpected(script.error());
    sbatch.dependency = dependency;

    const std::string label = p.stage.empty() ? "" : " (stage " + p.stage + ")";
    if (opts.dry_run) {
      std::vector<std::string> argv{"sbatch", "--parsable"};
      if (opts.test_only) argv.emplace_back("--test-only");
      if (!dependency.empty()) argv.push_back("--dependency=" + dependency);
      ctx.out << "# "
              << (local ? "local runner: /bin/bash SCRIPT in the background"
                        : sys::format_command(argv) + " < SCRIPT")
              << label << " on " << p.row.label() << "\n"
              << *script;
      if (!script->ends_with('\n')) ctx.out << '\n';
      previous = "<job id>";
      continue;
    }
    // Slurm opens the log files before the script runs: their directory must exist.
    std::error_code ec;
    if (!sbatch.output.empty()) fs::create_directories((cwd / sbatch.output).parent_path(), ec);
    if (!sbatch.error.empty()) fs::create_directories((cwd / sbatch.error).parent_path(), ec);

    slurm::SubmitRequest request{*script, sbatch, opts.test_only};
    auto result = s.backend->submit(request);
    if (!result) {
      if (!submitted.empty()) {
        ctx.err << "jobgen: stages submitted before the failure: ";
        for (const auto& [stage, id] : submitted) ctx.err << stage << "=" << id << ' ';
        ctx.err << "(cancel them with jobgen cancel)\n";
      }
      return std::unexpected(result.error());
    }
    if (opts.test_only) {
      ctx.out << result->message << label << '\n';
      continue;
    }
    const auto now = unix_now(ctx);
    const std::string stem = fmt::format("{}-{}-{}{}", prof.name, result->job_id,
                                         render::sanitize_job_name(sbatch.job_name),
                                         p.stage.empty() ? "" : "-" + p.stage);
    const fs::path script_path = s.state_dir / "scripts" / (stem + ".sh");
    if (auto ok = ctx.fs.write_file(script_path, *script, 0755); !ok) {
      ctx.err << "jobgen: warning: " << ok.error().message << '\n';
    }
    ledger::JobRecord record;
    record.job_id = result->job_id;
    record.backend = s.backend_name;
    record.cluster = prof.name;
    record.target = p.row.group;
    record.job_name = sbatch.job_name;
    record.spec_path = fs::absolute(opts.request.jobspec).string();
    record.spec_hash = spec_text ? text_hash(*spec_text) : "";
    record.script_path = script_path.string();
    record.plan_json = p.plan.dump();
    record.submit_time = now;
    record.last_state = "PENDING";
    record.stdout_path = sbatch.output;
    record.stderr_path = sbatch.error;
    record.work_dir = sbatch.working_dir;
    record.estimated_runtime_s = p.estimate_s;
    record.array_size = render::sweep_task_count(job->sweep);
    if (auto ok = s.ledger->insert(record); !ok) {
      ctx.err << "jobgen: warning: job " << result->job_id
              << " was submitted but not recorded: " << ok.error().message << '\n';
    }
    submitted.emplace_back(p.stage, result->job_id);
    previous = result->job_id;
    if (opts.json) {
      nlohmann::json entry{
          {"job_id", result->job_id}, {"target", p.row.group}, {"script", script_path.string()}};
      if (!p.stage.empty()) entry["stage"] = p.stage;
      if (record.array_size > 0) entry["array_size"] = record.array_size;
      answers.push_back(entry);
    } else {
      ctx.out << result->job_id << '\n';
      ctx.err << "jobgen: submitted job " << result->job_id << label << " on " << p.row.label()
              << (record.array_size > 0 ? fmt::format(" ({} array tasks)", record.array_size) : "")
              << "; follow it with 'jobgen watch " << result->job_id << "'\n";
    }
  }
  if (opts.json && !opts.dry_run && !opts.test_only && !answers.empty()) {
    nlohmann::json out = answers.back();
    if (answers.size() > 1) out["jobs"] = answers;
    ctx.out << out.dump() << '\n';
  }
  return Exit::ok;
}

}  // namespace

void add_submit_command(CLI::App& app, Context& ctx, Action& action) {
  auto opts = std::make_shared<SubmitOptions>();
  CLI::App* sub = app.add_subcommand(
      "submit",
      "Plan, render, check and submit a job (stages become an afterok chain, a sweep "
      "one job array)");
  add_job_request_options(sub, opts->request, "Submit");
  add_job_command_options(sub, opts->common);
  sub->add_flag("--test-only", opts->test_only,
                "Ask the scheduler when the job would start; submit nothing (sbatch --test-only)");
  sub->add_flag("--dry-run", opts->dry_run, "Print the scripts and commands; submit nothing");
  sub->add_option("--after", opts->after, "Start only after this job completed successfully");
  sub->add_flag("--json", opts->json, "Print {\"job_id\": ...}");
  sub->callback([&ctx, &action, opts, sub] {
    record_command_line(sub, "submit", opts->request);
    action = [&ctx, opts] { return run_submit(ctx, *opts); };
  });
}

}  // namespace jobgen::cli
