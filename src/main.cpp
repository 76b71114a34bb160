// Thin entry point: everything lives in jobgen_core so the tests link the same code.
#include "jobgen/cli/app.hpp"

int main(int argc, char** argv) {
  return jobgen::cli::main(argc, argv);
}
