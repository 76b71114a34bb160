#include "jobgen/app/local_preflight.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "jobgen/plan/storage.hpp"
#include "jobgen/render/command_line.hpp"
#include "jobgen/sys/user.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::app {

namespace {

std::optional<double> number(std::string_view text) {
  text = util::trim(text);
  if (text.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(std::string(text), &used);
    if (used != text.size() || v < 0) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The devices a job of `wanted` GPUs gets, as LocalBackend hands them out.
std::vector<std::string> devices_for(const sys::Environment& env, int wanted) {
  std::vector<std::string> list = local_gpu_list(env);
  if (list.empty())
    for (int i = 0; i < wanted; ++i) list.push_back(std::to_string(i));
  if (static_cast<int>(list.size()) > wanted) list.resize(static_cast<std::size_t>(wanted));
  return list;
}

// "; JOBGEN_LOCAL_GPUS=2,3 gives free ones" when nvidia-smi lists enough free GPUs, else "".
std::string free_hint(const std::vector<GpuUsage>& gpus, std::size_t wanted) {
  std::vector<std::string> free;
  for (const auto& g : gpus)
    if (g.used_mib <= kBusyMiB && free.size() < wanted) free.push_back(g.index);
  if (free.size() < wanted) return "; wait for them to end";
  return "; wait for them, or take free ones: JOBGEN_LOCAL_GPUS=" + util::join(free, ",");
}

// The GPUs' problems; nullopt when nvidia-smi could not be asked, with `why` (said as a note).
std::optional<std::vector<Error>> gpu_problems(sys::CommandRunner& runner,
                                               const std::vector<std::string>& devices,
                                               int timeout_s, std::string& why) {
  sys::Command command;
  command.argv = {"nvidia-smi", "--query-gpu=index,memory.used,memory.total",
                  "--format=csv,noheader,nounits"};
  command.timeout = std::chrono::seconds(timeout_s);
  command.max_output_bytes = 1u << 20;  // a line of about 30 bytes per GPU
  auto ran = runner.run(command);
  if (!ran) {
    // Not installed, or hung: a sick GPU or driver can keep nvidia-smi from ever answering.
    const std::string& message = ran.error().message;
    why = message.find("did not finish") != std::string::npos
              ? "nvidia-smi did not answer within " + std::to_string(timeout_s) +
                    " s and was killed (a hung GPU or driver?)"
          : message.starts_with("cannot run") ? "no nvidia-smi here"
                                              : message;  // more output than a GPU list
    return std::nullopt;
  }
  if (ran->exit_code != 0) {
    const std::string_view err = ran->err;
    why = "nvidia-smi failed (exit " + std::to_string(ran->exit_code) + ": " +
          util::printable(err.substr(0, err.find('\n')), 200) + ")";
    return std::nullopt;
  }
  auto gpus = parse_gpu_usage(ran->out);
  if (!gpus) return std::vector<Error>{gpus.error()};
  std::vector<Error> problems;
  const std::string hint = free_hint(*gpus, devices.size());
  for (const auto& device : devices) {
    const auto it = std::ranges::find(*gpus, device, &GpuUsage::index);
    if (it == gpus->end()) {
      // A UUID or MIG device name in CUDA_VISIBLE_DEVICES is not in nvidia-smi's index column.
      if (util::parse_int(device))
        problems.push_back(Error{fmt::format("GPU {} is not on this machine (nvidia-smi lists {})",
                                             device, gpus->size()),
                                 {}});
      continue;
    }
    if (it->used_mib > kBusyMiB)
      problems.push_back(Error{
          fmt::format(
              "GPU {} is in use: {:.1f} of {:.1f} GiB taken by other processes (nvidia-smi){}",
              device, it->used_mib / 1024, it->total_mib / 1024, hint),
          {}});
  }
  return problems;
}

// Whether `program` can be started: a path to an executable file, or a name found on PATH.
bool can_start(const sys::FileSystem& fs, const sys::Environment& env, const std::string& program) {
  const auto executable = [&](const std::filesystem::path& path) {
    const auto st = fs.status(path);
    return st && st->kind == sys::FileStatus::Kind::file && (st->mode & 0111) != 0;
  };
  if (program.find('/') != std::string::npos) return executable(program);
  const std::string path = env.get("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  for (const auto dir : util::split(path, ':'))
    if (executable(std::filesystem::path(dir.empty() ? "." : std::string(dir)) / program))
      return true;
  return false;
}

// The programs a local run starts: the launcher (torchrun, deepspeed, accelerate), or for python
// and srun the command's own program (python3 for a script or module); and an executable the
// launcher starts (--no-python). Words the job expands ($HOME/train.sh, {{x}}) are not checked.
std::vector<std::string> programs_of(const render::RenderInput& in) {
  std::vector<std::string> out;
  const auto words = render::split_command(in.command_text);
  if (!words || words->empty()) return out;
  const render::Program program = render::classify_program(*words);
  const bool direct = in.launcher == spec::Launcher::python || in.launcher == spec::Launcher::srun;
  if (direct) {
    out.push_back(program.direct_argv.front());
  } else {
    out.emplace_back(spec::launcher_name(in.launcher));
    if (program.kind == render::ProgramKind::executable)
      out.push_back(program.launcher_argv.front());
  }
  std::erase_if(out, [](const std::string& word) {
    return word.find('$') != std::string::npos || word.find("{{") != std::string::npos;
  });
  return out;
}

void program_problems(const Context& ctx, const spec::JobSpec& spec, const render::RenderInput& in,
                      std::vector<Error>& problems) {
  for (const auto& program : programs_of(in)) {
    if (can_start(ctx.fs, ctx.env, program)) continue;
    const bool launcher = program == spec::launcher_name(in.launcher);
    const std::string where =
        program.find('/') != std::string::npos
            ? "is not an executable file"
            : "is not on PATH (" + util::printable(ctx.env.get("PATH").value_or(""), 200) + ")";
    problems.push_back(
        Error{fmt::format("the job starts '{}', which {}: {}", util::printable(program, 200), where,
                          launcher ? "activate the environment that has it (e.g. 'source "
                                     "venv/bin/activate') before submitting, or choose another "
                                     "'launcher:'"
                                   : "install it, or give its path in 'command'"),
              launcher && spec.launcher_loc ? *spec.launcher_loc : spec.command_loc});
  }
}

}  // namespace

Expected<std::vector<GpuUsage>> parse_gpu_usage(std::string_view text) {
  std::vector<GpuUsage> gpus;
  for (const auto line : util::split(text, '\n')) {
    if (util::trim(line).empty()) continue;
    const auto fields = util::split(line, ',');
    const auto used = fields.size() == 3 ? number(fields[1]) : std::nullopt;
    const auto total = fields.size() == 3 ? number(fields[2]) : std::nullopt;
    if (!used || !total)
      return fail("nvidia-smi printed a line jobgen cannot read: '" + util::printable(line, 120) +
                  "' (expected index, memory.used, memory.total)");
    gpus.push_back({std::string(util::trim(fields[0])), *used, *total});
  }
  return gpus;
}

std::vector<std::string> local_gpu_list(const sys::Environment& env) {
  std::optional<std::string> list = env.get("JOBGEN_LOCAL_GPUS");
  if (!list) list = env.get("CUDA_VISIBLE_DEVICES");
  std::vector<std::string> out;
  if (!list) return out;
  for (const auto item : util::split(*list, ',')) {
    const auto word = util::trim(item);
    if (!word.empty()) out.emplace_back(word);
  }
  return out;
}

Expected<void> preflight_local(const Context& ctx, sys::CommandRunner& runner,
                               const JobRequest& job, bool force) {
  std::vector<Error> problems;
  int wanted = 0;
  for (const auto& stage : job.stages) wanted = std::max(wanted, stage.row.world_size());
  const std::vector<std::string> devices = devices_for(ctx.env, wanted);
  // The rendered scripts' own bound on nvidia-smi (templates/partials), 20 s here by default.
  int timeout_s = 20;
  if (const auto v = ctx.env.get("JOBGEN_NVIDIA_SMI_TIMEOUT_S"))
    if (const auto n = util::parse_int(*v); n && *n >= 1 && *n <= 600)
      timeout_s = static_cast<int>(*n);
  std::string why;
  if (auto gpus = gpu_problems(runner, devices, timeout_s, why)) {
    problems.insert(problems.end(), gpus->begin(), gpus->end());
  } else if (wanted > 0) {
    ctx.report.note(why + ": the job gets CUDA_VISIBLE_DEVICES=" + util::join(devices, ",") +
                    " unchecked");
  }
  std::vector<const spec::JobSpec*> specs;  // the job spec, or the stages being launched
  for (const auto& stage : job.stages) {
    const auto st = job.spec.stage(stage.stage);
    specs.push_back(stage.stage.empty() || !st ? &job.spec : *st);
  }
  for (std::size_t i = 0; i < specs.size(); ++i)
    program_problems(ctx, *specs[i], job.stages[i].request.input, problems);
  std::vector<std::string> seen;
  for (const spec::JobSpec* spec : specs) {
    for (const auto& written : spec->data) {
      const std::string path = plan::with_user(written, sys::current_user(ctx.env));
      if (std::ranges::find(seen, path) != seen.end()) continue;
      seen.push_back(path);
      if (!ctx.fs.status(path))
        problems.push_back(
            Error{"data path '" + util::printable(path, 200) + "' does not exist", spec->data_loc});
    }
  }
  if (problems.empty()) return {};
  if (force) {
    for (const auto& p : problems) {
      const SourceLoc& at = p.where;
      const std::string place =
          at.file.empty() ? "" : fmt::format("{}:{}:{}: ", at.file, at.line, at.col);
      ctx.report.warning(place + p.message + " (--force: launching anyway)");
    }
    return {};
  }
  Error all{"the local run would fail at once (--force launches anyway):", {}, Exit::invalid_input};
  all.more = std::move(problems);
  return std::unexpected(std::move(all));
}

}  // namespace jobgen::app
