// Mustache templates for batch scripts: the set the renderer chooses from, the variables a
// template may use, and a strict check of a template against them.
//
// Names: a top-level template is "<launcher>.<variant>" (variant "sbatch" or "local"), stored as
// templates/<name>.mustache; a partial is templates/partials/<name>.mustache and is used as
// {{>name}}. A site directory (the profile's template_dir) or --template FILE overrides bundled
// templates by name. One trailing newline of a partial file is dropped, so that a `{{>name}}`
// line renders exactly the partial's lines.
//
// Variable kinds (documented for users in templates/README.md, which a unit test keeps complete):
// - word:    a value, inserted with {{name}} as ONE shell word (quoted when needed; see
//            shell_quote.hpp). {{{name}}} on a word is an error: it would not be quoted. A word
//            must stand outside quotes, backticks and here-documents (shell_context.hpp), where
//            its own quoting applies.
// - plain:   a word jobgen made that never needs quoting (a number, a shell identifier, a
//            sanitized job name): inserted with {{name}}, and allowed inside quotes too.
// - code:    shell text jobgen built and quoted itself (the run command line, #SBATCH
//            directives), inserted with {{{name}}} or {{&name}}; {{name}} on code is an error.
// - flag:    a boolean for {{#name}}...{{/name}} and {{^name}}...{{/name}}.
// - list:    a list for {{#name}}...{{/name}}; inside it the item's fields are visible.
// Anything else (an unknown name, a missing partial, a set-delimiter tag, an unclosed section) is
// an error naming the template file and line. Bounds, so that no template can make rendering
// take unbounded time or memory: sections nest at most kMaxSectionDepth deep, a list section
// never inside another list (each would repeat the other's body per item), at most
// kMaxListSections list sections and kMaxTemplateTags tags counting every partial inclusion,
// partials nest at most kMaxPartialDepth deep. A section's open and close tags stand outside
// quotes and in the same quoting context.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/sys/system.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::render {

struct Template {
  std::string text;
  std::string
      file;  // where it came from, for error messages ("templates/torchrun.sbatch.mustache")
};

struct TemplateSet {
  std::map<std::string, Template> templates;  // "torchrun.sbatch" -> ...
  std::map<std::string, Template> partials;   // "sbatch_header" -> ...
};

inline constexpr std::size_t kMaxSectionDepth = 16;
inline constexpr int kMaxListSections = 32;
inline constexpr int kMaxTemplateTags = 5000;
inline constexpr std::size_t kMaxPartialDepth = 16;

enum class VarKind { word, plain, code, flag, list };

struct VariableDoc {
  std::string name;
  VarKind kind;
  std::string meaning;
  std::string example;
  std::string list;  // for fields of list items: the list's name; "" for top-level variables
};

// Every variable the renderer provides, top-level first, then the fields of list items.
const std::vector<VariableDoc>& template_variables();

// Checks `tmpl` and, recursively, the partials it uses. Errors are invalid(...) at file:line:col.
Expected<void> validate_template(const Template& tmpl, const TemplateSet& set);

// Loads <dir>/*.mustache as templates and <dir>/partials/*.mustache as partials from each
// directory in order; a later directory overrides an earlier one by name (bundled templates
// first, then the profile's template_dir). Directories that do not exist are skipped.
Expected<TemplateSet> load_templates(const sys::FileSystem& fs,
                                     const std::vector<std::filesystem::path>& dirs);

// The top-level template name for a launcher and variant, e.g. "srun.local".
std::string template_name(std::string_view launcher, bool local);

}  // namespace jobgen::render
