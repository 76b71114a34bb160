// `jobgen __complete WORD...` (hidden): what the completion scripts call on every TAB. The words
// are a partial command line, so app.cpp hands them over before CLI11 parses anything ("--",
// "-t", "--help" among them are words to complete, not jobgen's own options). Prints the
// candidates for the last WORD (completion.hpp), one "word<TAB>description" per line, and always
// exits 0 with nothing on stderr: a broken profile or a missing ledger means fewer words, never
// an error in the middle of the user's command line. The dynamic words come from the same lookups
// as the commands (profile_lookup.hpp) and, for job ids, from the ledger database opened
// read-only (no directory or database is created by pressing TAB).

#include <algorithm>
#include <map>

#include "jobgen/app/completion_words.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/completion.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::cli {

namespace {

class RealSource final : public CompletionSource {
 public:
  explicit RealSource(Context& ctx) : ctx_(ctx) {}

  std::vector<Candidate> values(ValueKind kind, const std::string& profile) override {
    static const std::map<ValueKind, app::WordKind> kKinds{
        {ValueKind::profile, app::WordKind::profile},
        {ValueKind::target, app::WordKind::target},
        {ValueKind::job_id, app::WordKind::job_id},
        {ValueKind::gpu, app::WordKind::gpu},
        {ValueKind::model, app::WordKind::model},
        {ValueKind::launcher, app::WordKind::launcher}};
    const auto it = kKinds.find(kind);
    if (it == kKinds.end()) return {};
    std::vector<Candidate> out;
    for (auto& w : app::completion_words(ctx_.app(), it->second, profile))
      out.push_back({std::move(w.word), std::move(w.description)});
    return out;
  }

 private:
  Context& ctx_;
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
