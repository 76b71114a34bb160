#include "jobgen/sys/settings.hpp"

#include <string>

#include "jobgen/util/strings.hpp"

namespace jobgen::sys {

Expected<std::optional<int64_t>> positive_setting(const Environment& env, const char* name,
                                                  int64_t most) {
  const auto text = env.get(name);
  if (!text || text->empty()) return std::nullopt;
  const auto value = util::parse_int(*text);
  if (!value || *value < 1 || *value > most)
    return invalid(std::string(name) + "='" + util::printable(*text, 40) +
                   "' is not a whole number from 1 to " + std::to_string(most));
  return value;
}

Expected<std::optional<std::chrono::seconds>> slurm_command_timeout(const Environment& env) {
  JOBGEN_TRY_ASSIGN(auto seconds, positive_setting(env, "JOBGEN_SLURM_TIMEOUT", 86'400));
  if (!seconds) return std::nullopt;
  return std::chrono::seconds(*seconds);
}

}  // namespace jobgen::sys
