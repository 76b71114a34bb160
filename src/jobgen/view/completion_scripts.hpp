// The completion scripts `jobgen completion bash|zsh|fish` prints and the install puts where each
// shell finds them: each hands the words typed so far to `jobgen __complete` (cli/completion.hpp).
#pragma once

#include <string_view>

namespace jobgen::view {

enum class Shell { bash, zsh, fish };
std::string_view completion_script(Shell shell);

}  // namespace jobgen::view
