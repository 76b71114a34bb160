// The table of training settings (settings.hpp) and reading and writing a setting's value.
#include "jobgen/estimate/settings.hpp"

#include <fmt/format.h>

#include <cmath>

#include "jobgen/util/strings.hpp"

namespace jobgen::estimate {

namespace {

template <class T>
bool is_default(const TrainingSetup& s, T TrainingSetup::*member) {
  static const TrainingSetup defaults{};
  return s.*member == defaults.*member;
}

Expected<bool> parse_bool(std::string_view text) {
  const std::string v = util::lower(util::trim(text));
  if (v == "true" || v == "yes" || v == "on" || v == "1") return true;
  if (v == "false" || v == "no" || v == "off" || v == "0") return false;
  return invalid("must be true or false, not '" + util::printable(text, 40) + "'");
}

}  // namespace

const Setting* find_setting(std::string_view key) {
  for (const Setting& s : kSettings)
    if (s.key == key) return &s;
  return nullptr;
}

std::string setting_text(const TrainingSetup& setup, const Setting& setting) {
  return std::visit(
      [&](auto member) -> std::string {
        const auto& value = setup.*member;
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, bool>)
          return value ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::optional<bool>>)
          return value ? (*value ? "true" : "false") : "auto";
        else if constexpr (std::is_same_v<T, int>)
          return std::to_string(value);
        else if constexpr (std::is_same_v<T, double>)
          return fmt::format("{:g}", value);
        else
          return std::string(to_string(value));
      },
      setting.member);
}

Expected<void> set_setting(TrainingSetup& setup, const Setting& setting, std::string_view text) {
  return std::visit(
      [&](auto member) -> Expected<void> {
        auto& value = setup.*member;
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::optional<bool>>) {
          if (std::is_same_v<T, std::optional<bool>> && util::lower(util::trim(text)) == "auto") {
            value = T{};
            return {};
          }
          JOBGEN_TRY_ASSIGN(const bool b, parse_bool(text));
          value = b;
        } else if constexpr (std::is_same_v<T, int> || std::is_same_v<T, double>) {
          const std::string t(util::trim(text));
          char* end = nullptr;
          const double v = std::strtod(t.c_str(), &end);
          const bool whole = std::is_same_v<T, double> || std::floor(v) == v;
          if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v) || !whole ||
              v < setting.min || v > setting.max)
            return invalid(fmt::format("must be {} from {} to {}, not '{}'",
                                       std::is_same_v<T, int> ? "a whole number" : "a number",
                                       setting.min, setting.max, util::printable(text, 40)));
          value = static_cast<T>(v);
        } else {
          JOBGEN_TRY_ASSIGN(value, parse<T>(text));
        }
        return {};
      },
      setting.member);
}

bool setting_on(const TrainingSetup& setup, const Setting& setting) {
  if (setting.applies != nullptr) return setting.applies(setup);
  return std::visit(
      [&](auto member) -> bool {
        const auto& value = setup.*member;
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, bool>)
          return value;
        else if constexpr (std::is_same_v<T, std::optional<bool>>)
          return value.value_or(false);
        else
          return !is_default(setup, member);
      },
      setting.member);
}

std::string setting_values(const Setting& setting) {
  return std::visit(
      [&](auto member) -> std::string {
        using T = std::decay_t<decltype(TrainingSetup{}.*member)>;
        if constexpr (std::is_same_v<T, bool>)
          return "true|false";
        else if constexpr (std::is_same_v<T, std::optional<bool>>)
          return "auto|true|false";
        else if constexpr (std::is_same_v<T, int>)
          return fmt::format("{}-{}", static_cast<int64_t>(setting.min),
                             static_cast<int64_t>(setting.max));
        else if constexpr (std::is_same_v<T, double>)
          return fmt::format("{:g}-{:g}", setting.min, setting.max);
        else
          return util::join(option_names<T>(), "|");
      },
      setting.member);
}

}  // namespace jobgen::estimate
