// `jobgen __complete WORD...` (hidden): what the completion scripts call on every TAB. The words
// are a partial command line, so app.cpp hands them over before CLI11 parses anything ("--",
// "-t", "--help" among them are words to complete, not jobgen's own options). Prints the
// candidates for the last WORD (completion.hpp), one "word<TAB>description" per line, and always
// exits 0 with nothing on stderr: a broken profile or a missing ledger means fewer words, never
// an error in the middle of the user's command line. The dynamic words come from the same lookups
// as the commands (profile_lookup.hpp) and, for job ids, from the ledger database opened
// read-only (no directory or database is created by pressing TAB).

#include <algorithm>
#include <memory>

#include "jobgen/app/jobs.hpp"
#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/completion.hpp"
#include "jobgen/model/architecture.hpp"
#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/spec/launcher.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::cli {

namespace {

// Newest first; enough for any shell menu.
constexpr int kMaxJobIds = 100;

class RealSource final : public CompletionSource {
 public:
  explicit RealSource(Context& ctx) : ctx_(ctx) {}

  std::vector<Candidate> values(ValueKind kind, const std::string& profile) override {
    switch (kind) {
      case ValueKind::profile:
        return profiles();
      case ValueKind::target:
        return targets(profile);
      case ValueKind::job_id:
        return job_ids();
      case ValueKind::gpu:
        return gpus();
      case ValueKind::model:
        return words(model::preset_names(), "model preset");
      case ValueKind::launcher:
        return words(spec::launcher_names(), "launcher");
      case ValueKind::none:
        break;
    }
    return {};
  }

 private:
  static std::vector<Candidate> words(const std::vector<std::string>& names, const char* what) {
    std::vector<Candidate> out;
    for (const auto& name : names) out.push_back({name, what});
    return out;
  }

  std::vector<Candidate> profiles() {
    std::vector<Candidate> out;
    for (const auto& entry : app::list_profiles(ctx_.app())) {
      out.push_back({entry.name, entry.origin + " profile " + entry.path.string()});
    }
    return out;
  }

  const profile::Catalog* catalog() {
    if (!catalog_) {
      auto loaded = app::load_catalog(ctx_.app());
      catalog_ =
          std::make_unique<profile::Catalog>(loaded ? std::move(*loaded) : profile::Catalog{});
    }
    return catalog_.get();
  }

  std::vector<Candidate> gpus() {
    std::vector<Candidate> out;
    for (const auto& gpu : catalog()->gpus) {
      out.push_back({gpu.id, gpu.name});
      for (const auto& alias : gpu.aliases) out.push_back({alias, gpu.name});
    }
    return out;
  }

  // What --target accepts for the profile (plan/planner.cpp select_groups): node group names,
  // gres types (MIG slice types too) and the ids and aliases of the GPUs in the node groups.
  std::vector<Candidate> targets(const std::string& requested) {
    const auto path = app::find_profile_file(ctx_.app(), requested);
    if (!path) return {};
    const auto text = ctx_.fs.read_file(*path);
    if (!text) return {};
    const auto load = profile::load_profile(*text, path->string(), *catalog());
    if (!load.profile) return {};
    std::vector<Candidate> out;
    for (const auto& group : load.profile->node_groups) {
      out.push_back({group.name, "node group: " + std::to_string(group.gpus_per_node) + "x " +
                                     group.gpu + " on " + group.hostlist});
      if (group.gres_type) out.push_back({*group.gres_type, "gres type of " + group.name});
      if (group.mig) {
        for (const auto& slice : group.mig->slices) {
          out.push_back({slice.gres_type, "MIG " + slice.profile + " slice on " + group.name});
        }
      }
      if (const profile::GpuSpec* gpu = catalog()->find(group.gpu)) {
        out.push_back({gpu->id, gpu->name});
        for (const auto& alias : gpu->aliases) out.push_back({alias, gpu->name});
      }
    }
    return out;
  }

  std::vector<Candidate> job_ids() {
    std::vector<Candidate> out;
    for (const auto& r : app::recent_jobs(ctx_.app(), kMaxJobIds))
      out.push_back({r.job_id, r.job_name + " " + r.last_state + " " + r.target});
    return out;
  }

  Context& ctx_;
  std::unique_ptr<profile::Catalog> catalog_;
};

}  // namespace

Exit complete_command_line(const CLI::App& app, Context& ctx,
                           const std::vector<std::string>& words) {
  RealSource source(ctx);
  for (Candidate& c : complete_words(app, words, source)) {
    // One line per candidate, the description after the first tab: the scripts split there. A
    // word is typed into the command line as it is, so one with control characters is left out.
    std::replace_if(
        c.description.begin(), c.description.end(),
        [](char ch) { return ch == '\t' || ch == '\n' || ch == '\r'; }, ' ');
    c.description = util::escape_controls(c.description);
    if (std::any_of(c.word.begin(), c.word.end(),
                    [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; })) {
      continue;
    }
    ctx.out << c.word;
    if (!c.description.empty()) ctx.out << '\t' << c.description;
    ctx.out << '\n';
  }
  return Exit::ok;
}

}  // namespace jobgen::cli
