// `jobgen report [--since WHEN] [--run NAME] [--json|--markdown|--html FILE [--job ID]]`: planned
// vs used for the jobs the ledger recorded since WHEN (7 days by default), from one bulk sacct
// query (app/usage_report.hpp). Text by default; --json and --markdown print instead; --html
// writes one self-contained file (report/report_html.hpp) and says where.
// Exit: 0; 2 for a bad --since or a backend that cannot report (rest); 1 when sacct fails.
#include "jobgen/app/usage_report.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_options.hpp"
#include "jobgen/view/usage_html.hpp"
#include "jobgen/view/usage_view.hpp"

namespace jobgen::cli {

namespace {

struct ReportOptions {
  app::JobCommandOptions common;
  std::string since;
  std::string run;
  bool json = false;
  bool markdown = false;
  std::string html;
  std::string job;
};

Expected<Exit> run_report(Context& ctx, const ReportOptions& options) {
  app::ReportRequest request;
  request.run = options.run;
  if (!options.since.empty()) {
    JOBGEN_TRY_ASSIGN(request.since, app::parse_since(options.since, app::unix_now(ctx.app())));
  }
  JOBGEN_TRY_ASSIGN(auto session, app::open_job_session(ctx.app(), options.common, false));
  JOBGEN_TRY_ASSIGN(const auto report, app::build_report(*session, request));
  if (!options.html.empty()) {
    JOBGEN_TRY(ctx.fs.write_file(options.html, view::render_html(report, options.job), 0644));
    ctx.out << "Wrote " << options.html << " (" << report.jobs.size() << " job"
            << (report.jobs.size() == 1 ? "" : "s") << ").\n";
    return Exit::ok;
  }
  if (options.json) {
    ctx.out << view::render_json(report);
  } else if (options.markdown) {
    ctx.out << view::render_markdown(report);
  } else {
    ctx.out << view::render_text(report);
  }
  return Exit::ok;
}

}  // namespace

void add_report_command(CLI::App& app, Context& ctx, Action& action) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand(
      "report", "Planned vs used for your recent jobs: time, memory, CPU, GPU, cost, findings");
  add_job_command_options(sub, options->common);
  sub->add_option("--since", options->since,
                  "Jobs submitted since: 7d, 12h, 30m ago, or a date 2026-11-20[T08:00] "
                  "(default 7d)");
  sub->add_option("--run", options->run, "Only the jobs of this run (its id, as status shows)");
  auto* json = sub->add_flag("--json", options->json, "Print JSON");
  auto* markdown = sub->add_flag("--markdown", options->markdown, "Print Markdown");
  auto* html = sub->add_option("--html", options->html,
                               "Write one self-contained HTML file with charts to FILE");
  json->excludes(markdown)->excludes(html);
  markdown->excludes(html);
  sub->add_option("--job", options->job,
                  "The job whose GPU utilisation the HTML report charts (default: the longest "
                  "with telemetry)");
  sub->callback([&ctx, &action, options] {
    action = [&ctx, options]() { return run_report(ctx, *options); };
  });
}

}  // namespace jobgen::cli
