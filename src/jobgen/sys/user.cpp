#include "jobgen/sys/user.hpp"

namespace jobgen::sys {

std::string current_user(const Environment& env) {
  for (const char* name : {"USER", "LOGNAME"}) {
    if (auto value = env.get(name); value && !value->empty()) return *value;
  }
  return "";
}

}  // namespace jobgen::sys
