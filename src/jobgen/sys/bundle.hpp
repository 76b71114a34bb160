// Every side effect jobgen has, as one bundle of interfaces: the environment, files, the clock,
// commands (Slurm's), the local runner's process groups and HTTP (slurmrestd). cli::main builds
// the real bundle (RealSystem), once, and every layer below reaches the world only through it;
// tests build theirs from fakes.
#pragma once

#include "jobgen/sys/http.hpp"
#include "jobgen/sys/process.hpp"
#include "jobgen/sys/system.hpp"

namespace jobgen::sys {

struct System {
  Environment& env;
  FileSystem& fs;
  Clock& clock;
  CommandRunner& runner;
  ProcessGroups& processes;
  HttpClientFactory& http;
};

// The real side effects, owned; system() lends them as a bundle.
class RealSystem {
 public:
  System system() { return System{env_, fs_, clock_, runner_, processes_, http_}; }

 private:
  RealEnvironment env_;
  RealFileSystem fs_;
  RealClock clock_;
  RealCommandRunner runner_;
  RealProcessGroups processes_;
  CurlHttpClientFactory http_;
};

}  // namespace jobgen::sys
