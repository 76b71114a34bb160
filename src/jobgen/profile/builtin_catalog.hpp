// The GPU catalog compiled into jobgen: data/gpus.yaml of the source tree, parsed at build time by
// src/tools/catalog_gen.cpp with the same parse_catalog() the runtime uses, so every command
// starts without parsing 35 KB of YAML (it was 40 % of the CPU time of `jobgen status`).
// Equal, field by field, to parse_catalog() of that file (a unit test checks it). Units as in
// catalog.hpp.
#pragma once

#include "jobgen/profile/catalog.hpp"

namespace jobgen::profile {

const Catalog& builtin_catalog();

}  // namespace jobgen::profile
