// RenderInput + TemplateSet -> one bash script. Pure: no files, no environment, no clock.
//
// The template is "<launcher>.sbatch" or "<launcher>.local" from the set (a user's --template
// replaces that entry before the call). It is checked strictly first (template_set.hpp): an
// unknown variable or a missing partial is an error at the template's file:line, never an empty
// string. Values are inserted as shell words ({{name}} quotes), code jobgen built with {{{name}}}.
//
// Refused as invalid input, with advice: a run command that starts with a launcher (jobgen writes
// the launcher line; plan/launcher.hpp), python launcher on several nodes (it runs one process),
// a local run on several nodes, a sweep combined with a chain, a swept key the run command does
// not use, a placeholder without a value, environment names that are not shell identifiers.
#pragma once

#include <string>
#include <vector>

#include "jobgen/render/render_input.hpp"
#include "jobgen/render/template_set.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::render {

Expected<std::string> render_script(const TemplateSet& templates, const RenderInput& input);

// The names of the variables render_script gives the template for `input` (partials aside): what
// template_variables() documents, checked by a test.
Expected<std::vector<std::string>> rendered_variables(const RenderInput& input);

}  // namespace jobgen::render
