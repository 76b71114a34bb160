// Accounting limits: the sacctmgr/sshare text forms (slurm/sbatch/accounting_text.hpp), TRES
// strings, and the prediction of Slurm's pending reason (slurm/limits.hpp). Recorded answers in
// jobgen's own formats (VERSION 22.05, 24.11, 26.05), taken by
// tests/integration/test_acct_limits.sh with JOBGEN_ACCT_RECORD while its limits were set:
//   slurm-cli/sacctmgr-assoc-limits-VERSION.txt  sacctmgr -n -P show assoc format=<kAssocFormat>
//   slurm-cli/sacctmgr-qos-limits-VERSION.txt    sacctmgr -n -P show qos format=<kQosFormat>
//   slurm-cli/sshare-user-VERSION.txt            sshare -n -P -U -u root
//   slurm-cli/squeue-acct-VERSION.txt            squeue -h -r -O <squeue_fields()>
// Limits: qos normal MaxTRESPerUser=gres/gpu=2 and MaxTRESPerJob=gres/gpu=1, account vision
// GrpTRES=gres/gpu=2. Running: root's blockers in ml/normal (2 L40S GPUs) and vision/high (2 RTX
// 2080 Ti), and the test's 1-GPU job in ml/high.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "jobgen/slurm/limits.hpp"
#include "jobgen/slurm/sbatch/accounting_text.hpp"
#include "jobgen/slurm/sbatch/command_text.hpp"
#include "jobgen/slurm/sbatch/sbatch_backend.hpp"
#include "jobgen/util/build_config.hpp"
#include "profile_test_data.hpp"
#include "recording_runner.hpp"

using namespace jobgen;
using namespace jobgen::slurm;

namespace {

std::string data(const std::string& relative) {
  return test::read_text(jobgen::build::source_dir() + "/tests/data/slurm-cli/" + relative);
}

JobInfo running(std::string user, std::string account, std::string qos, std::string gres,
                int nodes = 1) {
  JobInfo j;
  j.user = std::move(user);
  j.account = std::move(account);
  j.qos = std::move(qos);
  j.gres = std::move(gres);
  j.num_nodes = nodes;
  j.state = JobState::running;
  return j;
}

// root -> ml, vision; user u in both with qos normal,high (default normal).
AccountLimits tree() {
  AccountLimits l;
  l.associations.push_back({"c", "root", "", "", "", {"normal"}, "", {}});
  l.associations.push_back({"c", "ml", "", "", "root", {"normal"}, "", {}});
  l.associations.push_back({"c", "vision", "", "", "root", {"normal"}, "", {}});
  l.associations.push_back({"c", "ml", "u", "", "", {"high", "normal"}, "normal", {}});
  l.associations.push_back({"c", "vision", "u", "", "", {"high", "normal"}, "normal", {}});
  l.qos.push_back({"normal", 0, {}});
  l.qos.push_back({"high", 10, {}});
  return l;
}

LimitRequest ask(std::string account, std::string qos, int64_t gpus) {
  LimitRequest r;
  r.user = "u";
  r.account = std::move(account);
  r.qos = std::move(qos);
  r.partition = "gpu";
  r.gpus = gpus;
  r.time_limit_s = 3600;
  return r;
}

}  // namespace

TEST_CASE("TRES strings: several entries, memory in MiB, empty, and errors") {
  auto t = parse_tres("cpu=8,gres/gpu=4,mem=64G,node=1");
  REQUIRE(t);
  CHECK(t->at("cpu") == 8);
  CHECK(t->at("gres/gpu") == 4);
  CHECK(t->at("mem") == 65536);
  CHECK(t->at("node") == 1);
  CHECK(parse_tres("").value().empty());
  CHECK(parse_tres("gres/gpu:gpul40s=2").value().at("gres/gpu:gpul40s") == 2);
  CHECK_FALSE(parse_tres("cpu"));
  CHECK_FALSE(parse_tres("cpu=x"));
  CHECK_FALSE(parse_tres("mem=lots"));
}

TEST_CASE("sacctmgr and sshare text: empty limits, UNLIMITED, a bad record is an error") {
  auto assoc = parse_sacctmgr_assoc(
      "c|root||||normal||||||||\n"
      "c|vision|||root|normal|||3|cpu=8,gres/gpu=4,mem=64G||||\n"
      "c|vision|u|||high,normal|normal||||2|10|gres/gpu=8|1-00:00:00\n");
  REQUIRE_MESSAGE(assoc, assoc.error().message);
  REQUIRE(assoc->size() == 3);
  CHECK((*assoc)[1].parent == "root");
  CHECK((*assoc)[1].limits.grp_submit == 3);  // GrpSubmit
  CHECK((*assoc)[1].limits.grp_tres.at("gres/gpu") == 4);
  CHECK((*assoc)[1].limits.grp_tres.at("mem") == 65536);
  CHECK((*assoc)[2].qos == std::vector<std::string>{"high", "normal"});
  CHECK((*assoc)[2].limits.max_jobs == 2);
  CHECK((*assoc)[2].limits.max_wall_s == 86400);
  CHECK_FALSE((*assoc)[0].limits.max_wall_s.has_value());
  // A TRES count Slurm would never print is an error naming the field, not "no limit".
  CHECK_FALSE(parse_sacctmgr_assoc("c|a|u|||normal|normal||||2|10|gres/gpu=UNLIMITED|\n"));
  CHECK_FALSE(parse_sacctmgr_assoc("c|a|u|||normal|normal||||2|10||two hours\n"));
  auto bad = parse_sacctmgr_assoc("c|a|u\n");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("line 1") != std::string::npos);

  auto qos =
      parse_sacctmgr_qos("normal|0||||gres/gpu=2||||UNLIMITED|02:00:00\nhigh|10||||||1|||\n");
  REQUIRE_MESSAGE(qos, qos.error().message);
  CHECK(qos->at(0).limits.max_tres_per_user.at("gres/gpu") == 2);
  CHECK_FALSE(qos->at(0).limits.max_submit_per_user.has_value());
  CHECK(qos->at(0).limits.max_wall_s == 7200);
  CHECK(qos->at(1).priority == 10);
  CHECK(qos->at(1).limits.max_jobs_per_user == 1);
  CHECK(parse_sacctmgr_qos("").value().empty());

  auto shares = parse_sshare(" ml|u|1|1.000000|119|0.000000|0.750000\nvision|u|1|0.5|0|0|\n");
  REQUIRE(shares);
  CHECK(shares->at(0).account == "ml");
  CHECK(shares->at(0).fairshare == doctest::Approx(0.75));
  CHECK_FALSE(shares->at(1).fairshare.has_value());  // no shares: unknown, not 0
  CHECK_FALSE(parse_sshare("ml|u|1|1|1|0|high\n"));
}

TEST_CASE("limits: nothing set starts -- the first limit hit names Slurm's reason") {
  AccountLimits l = tree();
  std::vector<JobInfo> queue{running("u", "ml", "normal", "gpu:gpul40s:2")};
  CHECK(check_limits(ask("ml", "normal", 1), l, queue).verdict == LimitVerdict::starts);

  l.qos[0].limits.max_tres_per_user["gres/gpu"] = 2;
  LimitResult r = check_limits(ask("ml", "normal", 1), l, queue);
  CHECK(r.verdict == LimitVerdict::pends);
  CHECK(r.reason == "QOSMaxGRESPerUser");
  CHECK(r.detail == "qos `normal` allows 2 GPUs per user, you use 2");
  // Another QOS is not limited; another user's jobs do not count per user.
  CHECK(check_limits(ask("ml", "high", 1), l, queue).verdict == LimitVerdict::starts);
  queue[0].user = "someone";
  CHECK(check_limits(ask("ml", "normal", 1), l, queue).verdict == LimitVerdict::starts);
  // Pending jobs use nothing.
  queue[0].user = "u";
  queue[0].state = JobState::pending;
  CHECK(check_limits(ask("ml", "normal", 2), l, queue).verdict == LimitVerdict::starts);
  // Alone above the per-user limit: it never starts.
  CHECK(check_limits(ask("ml", "normal", 3), l, queue).verdict == LimitVerdict::never);

  // Per job before per user, as Slurm checks them.
  queue[0].state = JobState::running;
  l.qos[0].limits.max_tres_per_job["gres/gpu"] = 2;
  r = check_limits(ask("vision", "normal", 4), l, queue);
  CHECK(r.verdict == LimitVerdict::never);
  CHECK(r.reason == "QOSMaxGRESPerJob");
}

TEST_CASE("limits: account GrpTRES counts the jobs of the account's subtree, any user") {
  AccountLimits l = tree();
  l.associations[2].limits.grp_tres["gres/gpu"] = 2;  // vision
  std::vector<JobInfo> queue{running("other", "vision", "high", "gpu:2")};
  LimitResult r = check_limits(ask("vision", "high", 1), l, queue);
  CHECK(r.reason == "AssocGrpGRES");
  CHECK(r.detail == "account `vision` allows 2 GPUs in all, its jobs use 2");
  CHECK(check_limits(ask("ml", "high", 1), l, queue).verdict == LimitVerdict::starts);
  // A limit on root holds every account below it.
  l.associations[2].limits.grp_tres.clear();
  l.associations[0].limits.grp_tres["gres/gpu"] = 3;
  queue.push_back(running("u", "ml", "normal", "gpu:gpul40s:1"));
  CHECK(check_limits(ask("ml", "high", 1), l, queue).reason == "AssocGrpGRES");
  // Multi-node jobs count GPUs per node x nodes.
  l.associations[0].limits.grp_tres["gres/gpu"] = 6;
  queue.push_back(running("u", "ml", "normal", "gres/gpu:1", 2));
  CHECK(check_limits(ask("ml", "high", 1), l, queue).verdict == LimitVerdict::starts);
  CHECK(check_limits(ask("ml", "high", 2), l, queue).reason == "AssocGrpGRES");
}

TEST_CASE("limits: job counts and wall time come before TRES -- inherited Max limits") {
  AccountLimits l = tree();
  std::vector<JobInfo> queue{running("u", "ml", "normal", "gpu:1")};
  l.qos[0].limits.max_tres_per_job["gres/gpu"] = 1;
  l.associations[3].limits.max_jobs = 1;  // u in ml
  // Both hold the 2-GPU job: Slurm shows the job-count limit (checked first).
  CHECK(check_limits(ask("ml", "normal", 2), l, queue).reason == "AssocMaxJobsLimit");
  // The QOS's own job limit comes before the association's.
  l.qos[0].limits.max_jobs_per_user = 1;
  CHECK(check_limits(ask("ml", "normal", 1), l, queue).reason == "QOSMaxJobsPerUserLimit");
  // MaxWall set on the account holds its users' jobs (inherited), for good.
  l = tree();
  l.associations[2].limits.max_wall_s = 1800;
  LimitResult r = check_limits(ask("vision", "normal", 1), l, {});
  CHECK(r.verdict == LimitVerdict::never);
  CHECK(r.reason == "AssocMaxWallDurationPerJobLimit");
  l.qos[1].limits.max_wall_s = 600;
  CHECK(check_limits(ask("vision", "high", 1), l, {}).reason == "QOSMaxWallDurationPerJobLimit");
}

TEST_CASE("limits: CPU and memory aggregates are not known from the queue: not checked") {
  AccountLimits l = tree();
  l.qos[0].limits.max_tres_per_user["cpu"] = 8;
  l.qos[0].limits.grp_tres["mem"] = 1024;
  LimitResult r = check_limits(ask("ml", "normal", 1), l, {running("u", "ml", "normal", "")});
  CHECK(r.verdict == LimitVerdict::starts);
  CHECK(r.unchecked.size() == 2);
}

TEST_CASE("limits: an account or QOS the user may not use is refused -- choices and fair-share") {
  AccountLimits l = tree();
  CHECK(check_limits(ask("physics", "normal", 1), l, {}).reason == "InvalidAccount");
  CHECK(check_limits(ask("ml", "debug", 1), l, {}).reason == "InvalidQOS");
  const auto c = choices(l, "u");
  REQUIRE(c.size() == 4);
  CHECK(c[0].account == "ml");
  CHECK(c[0].qos == "normal");  // the default QOS first
  CHECK(c[1].qos == "high");
  CHECK(choices(l, "nobody").empty());
  l.shares.push_back({"vision", "u", 0.25});
  CHECK(fairshare_of(LimitIndex(l), "vision", "u") == doctest::Approx(0.25));
  CHECK_FALSE(fairshare_of(LimitIndex(l), "ml", "u").has_value());
}

TEST_CASE("tres_reason: Slurm's spellings") {
  CHECK(tres_reason("QOS", "Grp", "gres/gpu") == "QOSGrpGRES");
  CHECK(tres_reason("QOS", "MaxPerUser", "cpu") == "QOSMaxCpuPerUserLimit");
  CHECK(tres_reason("QOS", "MaxPerJob", "node") == "QOSMaxNodePerJobLimit");
  CHECK(tres_reason("Assoc", "Grp", "cpu") == "AssocGrpCpuLimit");
  CHECK(tres_reason("Assoc", "MaxPerJob", "gres/gpu") == "AssocMaxGRESPerJob");
  CHECK(tres_reason("QOS", "MaxPerAccount", "gres/gpu") == "QOSMaxGRESPerAccount");
  CHECK(tres_reason("QOS", "Grp", "billing").empty());
}

TEST_CASE("limits from recorded answers: the reasons Slurm 22.05, 24.11 and 26.05 showed") {
  for (const std::string v : {"22.05", "24.11", "26.05"}) {
    CAPTURE(v);
    AccountLimits l;
    auto assoc = parse_sacctmgr_assoc(data("sacctmgr-assoc-limits-" + v + ".txt"));
    REQUIRE_MESSAGE(assoc, assoc.error().message);
    l.associations = *assoc;
    auto qos = parse_sacctmgr_qos(data("sacctmgr-qos-limits-" + v + ".txt"));
    REQUIRE_MESSAGE(qos, qos.error().message);
    l.qos = *qos;
    auto shares = parse_sshare(data("sshare-user-" + v + ".txt"));
    REQUIRE_MESSAGE(shares, shares.error().message);
    l.shares = *shares;
    auto queue = parse_squeue_fields(data("squeue-acct-" + v + ".txt"));
    REQUIRE_MESSAGE(queue, queue.error().message);

    CHECK(l.associations.size() == 6);
    // root's own account has no usage: FairShare 1; ml and vision vary with the run's usage.
    CHECK(fairshare_of(LimitIndex(l), "root", "root") == doctest::Approx(1.0));
    CHECK(fairshare_of(LimitIndex(l), "vision", "root").has_value());
    const auto blocker = std::ranges::find(*queue, "vision", &JobInfo::account);
    REQUIRE(blocker != queue->end());
    CHECK(blocker->qos == "high");

    LimitRequest r;
    r.user = "root";
    r.partition = "gpu";
    r.time_limit_s = 900;
    const auto verdict = [&](std::string account, std::string q, int64_t gpus) {
      r.account = std::move(account);
      r.qos = std::move(q);
      r.gpus = gpus;
      return check_limits(r, l, *queue);
    };
    LimitResult got = verdict("ml", "normal", 1);
    CHECK(got.verdict == LimitVerdict::pends);
    CHECK(got.reason == "QOSMaxGRESPerUser");
    CHECK(got.detail == "qos `normal` allows 2 GPUs per user, you use 2");
    got = verdict("vision", "high", 1);
    CHECK(got.reason == "AssocGrpGRES");
    CHECK(got.detail == "account `vision` allows 2 GPUs in all, its jobs use 2");
    got = verdict("vision", "normal", 2);
    CHECK(got.verdict == LimitVerdict::never);
    CHECK(got.reason == "QOSMaxGRESPerJob");
    CHECK(verdict("ml", "high", 1).verdict == LimitVerdict::starts);
    CHECK(choices(l, "root").size() == 5);  // root/normal, then ml and vision with normal, high
  }
}

TEST_CASE("CLI backend limits: sacctmgr twice and sshare once -- no accounting is an error") {
  test::RecordingCommandRunner runner;
  runner.answer(0, data("sacctmgr-assoc-limits-22.05.txt"));
  runner.answer(0, data("sacctmgr-qos-limits-22.05.txt"));
  runner.answer(0, data("sshare-user-22.05.txt"));
  runner.answer(0, "root|ml\n");  // sacctmgr -n -P show user root format=User,DefaultAccount
  SbatchBackend backend(runner, {});
  auto limits = backend.limits("root");
  REQUIRE_MESSAGE(limits, limits.error().message);
  REQUIRE(runner.commands.size() == 4);
  CHECK(runner.argv_of(0) == std::string("sacctmgr -n -P show assoc format=") + kAssocFormat);
  CHECK(runner.argv_of(1) == std::string("sacctmgr -n -P show qos format=") + kQosFormat);
  CHECK(runner.argv_of(2) == "sshare -n -P -U -u root");
  CHECK(limits->associations.size() == 6);
  CHECK(limits->qos.size() == 2);
  CHECK(limits->shares.size() == 3);
  CHECK(runner.argv_of(3) == "sacctmgr -n -P show user root format=User,DefaultAccount");
  CHECK(limits->default_account == "ml");

  // A fair-share that cannot be read leaves the limits usable.
  test::RecordingCommandRunner no_share;
  no_share.answer(0, data("sacctmgr-assoc-limits-22.05.txt"));
  no_share.answer(0, data("sacctmgr-qos-limits-22.05.txt"));
  no_share.answer(1, "", "sshare: error: You are not running a supported priority plugin\n");
  no_share.answer(0, "");  // a user sacctmgr does not list: no default account known
  SbatchBackend second(no_share, {});
  auto without = second.limits("root");
  REQUIRE(without);
  CHECK(without->shares.empty());
  CHECK(without->default_account.empty());
  CHECK(parse_default_account("alice|vision\nbob|ml\n", "bob").value() == "ml");
  CHECK_FALSE(parse_default_account("alice\n", "alice"));

  // Without slurmdbd (22.05's words): an error saying so, never "no limits".
  test::RecordingCommandRunner none;
  none.answer(1, "",
              "You are not running a supported accounting_storage plugin\n"
              "Only 'accounting_storage/slurmdbd' is supported.\n");
  SbatchBackend third(none, {});
  auto missing = third.limits("root");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("accounting limits unavailable") != std::string::npos);
  CHECK(none.commands.size() == 1);
  // sacctmgr's own "sacctmgr: error: " is not repeated after the command's name.
  test::RecordingCommandRunner down;
  down.answer(1, "", "sacctmgr: error: Problem talking to the database: Connection refused\n");
  SbatchBackend fifth(down, {});
  const auto talking = fifth.limits("root");
  REQUIRE_FALSE(talking);
  CHECK(talking.error().message.find("sacctmgr: Problem talking to the database") !=
        std::string::npos);
  CHECK(talking.error().message.find("sacctmgr: sacctmgr") == std::string::npos);
  CHECK(talking.error().message.find("error: ") == std::string::npos);
  // An empty association list is no evidence of "no limits" either.
  test::RecordingCommandRunner empty;
  empty.answer(0, "");
  SbatchBackend fourth(empty, {});
  CHECK_FALSE(fourth.limits("root"));
}
