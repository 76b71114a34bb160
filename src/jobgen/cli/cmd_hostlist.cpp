// `jobgen hostlist expand EXPR...` prints one host per line, as `scontrol show hostnames`;
// `jobgen hostlist compress NAME...` prints one compressed expression, as `scontrol show
// hostlist` on the arguments joined with commas. Every argument may hold several comma-separated
// names or bracket expressions.
#include "jobgen/cli/commands.hpp"
#include "jobgen/util/hostlist.hpp"

namespace jobgen::cli {
namespace {

// The arguments are taken as CLI11 "extras", not as a vector option: CLI11 reads an argument
// like "[1-3,5]" given to a vector option as a list in its own syntax and splits it.
Expected<std::vector<std::string>> arguments(const CLI::App& sub) {
  std::vector<std::string> args = sub.remaining();
  if (args.empty()) {
    return invalid("give at least one hostlist expression (run 'jobgen hostlist " + sub.get_name() +
                   " --help' for usage)");
  }
  for (const std::string& arg : args) {
    if (arg.size() > 1 && arg.front() == '-') {
      return invalid("unknown option " + arg + " (run 'jobgen hostlist " + sub.get_name() +
                     " --help' for usage)");
    }
  }
  return args;
}

}  // namespace

void add_hostlist_command(CLI::App& app, Context& ctx, Action& action) {
  CLI::App* hostlist = app.add_subcommand("hostlist", "Expand or compress Slurm hostlists");
  hostlist->require_subcommand(1);

  CLI::App* expand = hostlist->add_subcommand(
      "expand", "Print every host of EXPR..., one per line, as scontrol show hostnames");
  expand->allow_extras();
  expand->footer("Arguments:\n  EXPR...  hostlists such as classt[01-05,07-16] or a,b,c");
  expand->callback([&ctx, &action, expand] {
    action = [&ctx, args = arguments(*expand)]() -> Expected<Exit> {
      if (!args) return std::unexpected(args.error());
      std::string out;
      std::size_t count = 0;
      for (const std::string& expression : *args) {
        auto hosts = util::expand_hostlist(expression);
        if (!hosts) return std::unexpected(hosts.error());
        count += hosts->size();
        if (count > util::kMaxHostlistHosts) {
          return invalid("the arguments expand to more than " +
                         std::to_string(util::kMaxHostlistHosts) + " hosts");
        }
        for (const std::string& host : *hosts) out += host + '\n';
      }
      ctx.out << out;
      return Exit::ok;
    };
  });

  CLI::App* compress = hostlist->add_subcommand(
      "compress", "Print NAME... (joined with commas) as one hostlist, as scontrol show hostlist");
  compress->allow_extras();
  compress->footer(
      "Arguments:\n  NAME...  host names or hostlists, e.g. classt01,classt02 classt03");
  compress->callback([&ctx, &action, compress] {
    action = [&ctx, args = arguments(*compress)]() -> Expected<Exit> {
      if (!args) return std::unexpected(args.error());
      std::string joined;
      for (const std::string& arg : *args) joined += (joined.empty() ? "" : ",") + arg;
      JOBGEN_TRY_ASSIGN(auto compressed, util::normalize_hostlist(joined));
      ctx.out << compressed << '\n';
      return Exit::ok;
    };
  });
}

}  // namespace jobgen::cli
