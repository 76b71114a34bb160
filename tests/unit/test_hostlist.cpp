// Hostlist expansion/compression. Every expected value below was observed with Slurm 22.05.8
// (`scontrol show hostnames EXPR`, `scontrol show hostlist a,b,c`), except the cases marked
// "jobgen rejects", where Slurm silently accepts what is surely a typo.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli_test.hpp"
#include "jobgen/util/hostlist.hpp"

using jobgen::util::compress_hostlist;
using jobgen::util::expand_hostlist;
using Hosts = std::vector<std::string>;

namespace {

Hosts expand(const std::string& expression) {
  auto hosts = expand_hostlist(expression);
  REQUIRE_MESSAGE(hosts.has_value(), expression);
  return *hosts;
}

std::string expand_error(const std::string& expression) {
  auto hosts = expand_hostlist(expression);
  REQUIRE_MESSAGE(!hosts.has_value(), expression);
  CHECK(hosts.error().exit == jobgen::Exit::invalid_input);
  CHECK(hosts.error().where.file.empty());
  return hosts.error().message;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("hostlist: expand ranges with zero padding as scontrol show hostnames") {
  CHECK(expand("a[1-3]") == Hosts{"a1", "a2", "a3"});
  CHECK(expand("classt[01-05,07-16]") == Hosts{"classt01", "classt02", "classt03", "classt04",
                                               "classt05", "classt07", "classt08", "classt09",
                                               "classt10", "classt11", "classt12", "classt13",
                                               "classt14", "classt15", "classt16"});
  CHECK(expand("node[001-010]") == Hosts{"node001", "node002", "node003", "node004", "node005",
                                         "node006", "node007", "node008", "node009", "node010"});
  CHECK(expand("[8-12]") == Hosts{"8", "9", "10", "11", "12"});
  CHECK(expand("n[9-11]") == Hosts{"n9", "n10", "n11"});
  CHECK(expand("n[09-11]") == Hosts{"n09", "n10", "n11"});
  // The width is the LOW bound's, as written.
  CHECK(expand("n[9-011]") == Hosts{"n9", "n10", "n11"});
  CHECK(expand("a[01-2]") == Hosts{"a01", "a02"});
  CHECK(expand("a[1-02]") == Hosts{"a1", "a2"});
  CHECK(expand("n[000]") == Hosts{"n000"});
  CHECK(expand("n[0-0]") == Hosts{"n0"});
  CHECK(expand("n[007]") == Hosts{"n007"});
  const Hosts big = expand("a[001-1000]");
  REQUIRE(big.size() == 1000);
  CHECK(big.front() == "a001");
  CHECK(big[98] == "a099");
  CHECK(big.back() == "a1000");
}

TEST_CASE("hostlist: single elements, lists, order and duplicates are kept") {
  CHECK(expand("n[7]") == Hosts{"n7"});
  CHECK(expand("n[7-7]") == Hosts{"n7"});
  CHECK(expand("n[2-3,1]") == Hosts{"n2", "n3", "n1"});
  CHECK(expand("n[1,1,2]") == Hosts{"n1", "n1", "n2"});
  CHECK(expand("n1,n1") == Hosts{"n1", "n1"});
  CHECK(expand("a,b,c") == Hosts{"a", "b", "c"});
  CHECK(expand("a[1-2],b[01-02]") == Hosts{"a1", "a2", "b01", "b02"});
}

TEST_CASE("hostlist: separators are comma, space and tab outside brackets") {
  CHECK(expand("a,,b") == Hosts{"a", "b"});
  CHECK(expand("a b") == Hosts{"a", "b"});
  CHECK(expand("n[1-2] m") == Hosts{"n1", "n2", "m"});
  CHECK(expand("a[1-3]\tb") == Hosts{"a1", "a2", "a3", "b"});
  CHECK(expand("n[1-2],,") == Hosts{"n1", "n2"});
  CHECK(expand("").empty());
  CHECK(expand(",").empty());
}

TEST_CASE("hostlist: several brackets expand in Slurm's order") {
  CHECK(expand("a[1-2]b[3-4]") == Hosts{"a1b3", "a1b4", "a2b3", "a2b4"});
  CHECK(expand("a[1-2]-[3-4]") == Hosts{"a1-3", "a1-4", "a2-3", "a2-4"});
  CHECK(expand("a[1-2][3-4]") == Hosts{"a13", "a14", "a23", "a24"});
  CHECK(expand("[1-2]b[3-4]") == Hosts{"1b3", "1b4", "2b3", "2b4"});
  // Three brackets: the last varies fastest, the middle one slowest.
  CHECK(expand("n[1-2][3-4][5-6]") ==
        Hosts{"n135", "n136", "n235", "n236", "n145", "n146", "n245", "n246"});
  CHECK(expand("x[00-02]y[1-2]z[8]") ==
        Hosts{"x00y1z8", "x01y1z8", "x02y1z8", "x00y2z8", "x01y2z8", "x02y2z8"});
  CHECK(expand("n[1-2]-[3-4]-ib[5]") == Hosts{"n1-3-ib5", "n2-3-ib5", "n1-4-ib5", "n2-4-ib5"});
  CHECK(expand("n[1-3,5]x[1-2]") ==
        Hosts{"n1x1", "n1x2", "n2x1", "n2x2", "n3x1", "n3x2", "n5x1", "n5x2"});
  CHECK(expand("n[1-2]a[3-4],m[5-6]") == Hosts{"n1a3", "n1a4", "n2a3", "n2a4", "m5", "m6"});
  CHECK(expand("a[1-1000]b[1-1000]").size() == 1'000'000);
}

TEST_CASE("hostlist: names with dashes and dots, no suffix after the last bracket") {
  CHECK(expand("node-1.cluster") == Hosts{"node-1.cluster"});
  CHECK(expand("rack1-n[1-2]") == Hosts{"rack1-n1", "rack1-n2"});
  // Slurm 22.05: "Invalid hostlist: gpu[1-2]-ib".
  CHECK(contains(expand_error("gpu[1-2]-ib"), "\"-ib\" after the last ']'"));
  expand_error("a.b[1-2].c");
  expand_error("a[1-2]b");
  expand_error("a[1-2]b,c");
}

TEST_CASE("hostlist: errors Slurm also reports") {
  CHECK(contains(expand_error("n[3-1]"), "reversed range \"3-1\""));
  CHECK(contains(expand_error("n[3-1]"), "(1-3)"));
  CHECK(contains(expand_error("n[]"), "empty range"));
  CHECK(contains(expand_error("n[a-b]"), "invalid range \"a-b\""));
  expand_error("n[-1]");
  expand_error("n[1-2-3]");
  expand_error("n[1--2]");
  expand_error("n[0x1]");
  expand_error("n[1x2]");
  expand_error("n[1,]");
  expand_error("n[,1]");
  expand_error("n[1,,2]");
  expand_error("a[1-2]x[]");
  expand_error("a[]x[1-2]");
  expand_error("[a]");
  expand_error("a[1-2]]");
  expand_error("a[1-2]][3-4]");
  expand_error("a[1-2[3-4]]");
  expand_error("a[1-3]b]c[1-2]");
  expand_error("a[1]]b[1-2]");
  // Slurm's limit is 65536 hosts per range.
  CHECK(expand("n[1-65536]").size() == 65536);
  CHECK(expand("n[0-65535]").back() == "n65535");
  CHECK(contains(expand_error("n[1-65537]"), "at most 65536"));
  CHECK(contains(expand_error("n[1-1000000]"), "1000000 hosts"));
  expand_error("a[1-65537]b[1-2]");
}

TEST_CASE("hostlist: typos Slurm accepts silently are rejected (jobgen rejects)") {
  CHECK(contains(expand_error("n[1-"), "missing ']'"));     // Slurm: a host "n]"
  expand_error("n[1-2");                                    // Slurm: "n]"
  expand_error("a[");                                       // Slurm: "a]"
  expand_error("x[1-2][");                                  // Slurm: "x[1-2]]"
  CHECK(contains(expand_error("n1-3]"), "unmatched ']'"));  // Slurm: a host "n1-3]"
  expand_error("a]b[1-2]");                                 // Slurm: a]b1 a]b2
  CHECK(contains(expand_error("a[1[2-3]"), "nested"));      // Slurm: a[12 a[13
  expand_error("a[[1-2]");                                  // Slurm: a[1 a[2
  expand_error("n[1-]");                                    // Slurm: n1
  expand_error("n[1, 2]");                                  // Slurm: n1 n02
  expand_error("n[ 1-2]");                                  // Slurm: n01 n02
  expand_error("n[+1-2]");                                  // Slurm: n01 n02
  expand_error("n[99999999999999999999]");                  // Slurm clamps to 2^64-1
  expand_error("a\nb");
  // More than a million hosts in total (Slurm has no total limit).
  CHECK(contains(expand_error("a[1-1000]b[1-1001]"), "more than 1000000 hosts"));
  expand_error(
      "a[1-60000],b[1-60000],c[1-60000],d[1-60000],e[1-60000],f[1-60000],g[1-60000],"
      "h[1-60000],i[1-60000],j[1-60000],k[1-60000],l[1-60000],m[1-60000],n[1-60000],"
      "o[1-60000],p[1-60000],q[1-60000]");
}

TEST_CASE("hostlist: compress as scontrol show hostlist (no sorting, no dedup)") {
  CHECK(compress_hostlist({"a1", "a2", "a3"}) == "a[1-3]");
  CHECK(compress_hostlist({"a3", "a2", "a1"}) == "a[3,2,1]");
  CHECK(compress_hostlist({"b1", "a1"}) == "b1,a1");
  CHECK(compress_hostlist({"n1", "n1"}) == "n[1,1]");
  CHECK(compress_hostlist({"n1", "n2", "n1"}) == "n[1-2,1]");
  CHECK(compress_hostlist({"n1", "n2", "n2", "n3"}) == "n[1-2,2-3]");
  CHECK(compress_hostlist({"n1", "n2", "n1", "n2"}) == "n[1-2,1-2]");
  CHECK(compress_hostlist({"a", "b", "a"}) == "a,b,a");
  CHECK(compress_hostlist({"a", "a"}) == "a,a");
  CHECK(compress_hostlist({"a", "a1"}) == "a,a1");
  CHECK(compress_hostlist({"a1", "a"}) == "a1,a");
  CHECK(compress_hostlist({"n1", "n3", "n5", "n2"}) == "n[1,3,5,2]");
  CHECK(compress_hostlist({"n1", "n3"}) == "n[1,3]");
  CHECK(compress_hostlist({"c10", "c9", "c1"}) == "c[10,9,1]");
  CHECK(compress_hostlist({"c2", "c10", "c1"}) == "c[2,10,1]");
  CHECK(compress_hostlist({"a10", "a2", "b1"}) == "a[10,2],b1");
  CHECK(compress_hostlist({"a1", "b1", "a2"}) == "a1,b1,a2");
  CHECK(compress_hostlist({"n1", "m1", "n2"}) == "n1,m1,n2");
  CHECK(compress_hostlist({"b2", "a1", "b3"}) == "b2,a1,b3");
  CHECK(compress_hostlist({"z", "a", "m"}) == "z,a,m");
  CHECK(compress_hostlist({"A1", "a1", "B1"}) == "A1,a1,B1");
  CHECK(compress_hostlist({"n0", "n1", "n2"}) == "n[0-2]");
  CHECK(compress_hostlist({"1", "2", "3"}) == "[1-3]");
  CHECK(compress_hostlist({"01", "02", "3"}) == "[01-02,3]");
  CHECK(compress_hostlist({}).empty());
}

TEST_CASE("hostlist: compress keeps names and merges only trailing numbers") {
  CHECK(compress_hostlist({"n1-1", "n1-2"}) == "n1-[1-2]");
  CHECK(compress_hostlist({"x1y2", "x1y3"}) == "x1y[2-3]");
  CHECK(compress_hostlist({"a1b", "a2b"}) == "a1b,a2b");
  CHECK(compress_hostlist({"node-1", "node-2"}) == "node-[1-2]");
  CHECK(compress_hostlist({"a.1", "a.2"}) == "a.[1-2]");
  CHECK(compress_hostlist({"rack1-n1", "rack1-n2", "rack2-n1"}) == "rack1-n[1-2],rack2-n1");
  CHECK(compress_hostlist({"n_1", "n-1", "n.1"}) == "n_1,n-1,n.1");
  CHECK(compress_hostlist({"x01y1", "x1y2"}) == "x01y1,x1y2");
  CHECK(compress_hostlist({"x0y1", "x00y2"}) == "x0y1,x00y2");
  CHECK(compress_hostlist({"n18446744073709551615"}) == "n18446744073709551615");
  // Leading zeros count in the width, not in the size limit.
  CHECK(compress_hostlist({"n00000000000000000000001", "n00000000000000000000002"}) ==
        "n[00000000000000000000001-00000000000000000000002]");
}

TEST_CASE("hostlist: compress mixes zero padding as Slurm does") {
  CHECK(compress_hostlist({"n9", "n10"}) == "n[9-10]");
  CHECK(compress_hostlist({"n09", "n10"}) == "n[09-10]");
  CHECK(compress_hostlist({"n9", "n010"}) == "n[9,010]");
  CHECK(compress_hostlist({"n08", "n9", "n10"}) == "n[08,9-10]");
  CHECK(compress_hostlist({"n8", "n09", "n10"}) == "n[8,09-10]");
  CHECK(compress_hostlist({"n1", "n01"}) == "n[1,01]");
  CHECK(compress_hostlist({"n01", "n1"}) == "n[01,1]");
  CHECK(compress_hostlist({"n001", "n01", "n1"}) == "n[001,01,1]");
  CHECK(compress_hostlist({"n5", "n05"}) == "n[5,05]");
  CHECK(compress_hostlist({"n10", "n010"}) == "n[10,010]");
  CHECK(compress_hostlist({"n100", "n099"}) == "n[100,099]");
  CHECK(compress_hostlist({"n0", "n00"}) == "n[0,00]");
  CHECK(compress_hostlist({"n00", "n0"}) == "n[00,0]");
  CHECK(compress_hostlist({"n00", "n01", "n1"}) == "n[00-01,1]");
  CHECK(compress_hostlist({"n1", "n2", "n03", "n04"}) == "n[1-2,03-04]");
  CHECK(compress_hostlist({"n01", "n02", "n3", "n4"}) == "n[01-02,3-4]");
  CHECK(compress_hostlist({"n0001", "n0002", "n1000", "n999"}) == "n[0001-0002,1000,999]");
  CHECK(compress_hostlist({"n9", "n10", "n11", "n08"}) == "n[9-11,08]");
  CHECK(compress_hostlist({"n09", "n10", "n8"}) == "n[09-10,8]");
  CHECK(compress_hostlist({"n9", "n09"}) == "n[9,09]");
  CHECK(compress_hostlist({"n10", "n9", "n09"}) == "n[10,9,09]");
  CHECK(compress_hostlist({"x01", "x1", "x2", "x02"}) == "x[01,1-2,02]");
  CHECK(compress_hostlist({"n09", "n010"}) == "n[09,010]");
  CHECK(compress_hostlist({"n099", "n100"}) == "n[099-100]");
  CHECK(compress_hostlist({"n99", "n100"}) == "n[99-100]");
  CHECK(compress_hostlist({"n99", "n0100"}) == "n[99,0100]");
  CHECK(compress_hostlist({"n9", "n10", "n011"}) == "n[9-10,011]");
  CHECK(compress_hostlist({"n10", "n11", "n012"}) == "n[10-11,012]");
  CHECK(compress_hostlist({"n01", "n2"}) == "n[01,2]");
  CHECK(compress_hostlist({"n1", "n02"}) == "n[1,02]");
  CHECK(compress_hostlist({"n01", "n02", "n03", "n5", "n06"}) == "n[01-03,5,06]");
}

TEST_CASE("hostlist: expand then compress round-trips the markov node groups") {
  for (const std::string expr : {"classt[01-05,07-16]", "classt[21-22]", "classt06", "n[1-3,5]"}) {
    CHECK(compress_hostlist(expand(expr)) == expr);
  }
  // Expanding then compressing equals scontrol show hostlist on the expression.
  CHECK(compress_hostlist(expand("n[1-3],n[2-5]")) == "n[1-3,2-5]");
  CHECK(compress_hostlist(expand("n[01-03],m1,n04")) == "n[01-03],m1,n04");
  CHECK(compress_hostlist(expand("n[8-10]")) == "n[8-10]");
}

TEST_CASE("hostlist: normalize an expression as scontrol show hostlist EXPR") {
  using jobgen::util::normalize_hostlist;
  const auto norm = [](const std::string& e) {
    auto r = normalize_hostlist(e);
    REQUIRE_MESSAGE(r.has_value(), e);
    return *r;
  };
  CHECK(norm("n[1-2][3-4]") == "n1[3-4],n2[3-4]");
  CHECK(norm("n[017-18][15-015,007]") == "n017[15,007],n018[15,007]");
  CHECK(norm("x[1-2]-[3-4]-ib[5]") == "x1-3-ib5,x2-3-ib5,x1-4-ib5,x2-4-ib5");
  CHECK(norm("a[1-2]b[3-4],a1b5") == "a1b[3-4],a2b[3-4],a1b5");
  CHECK(norm("n[1-2][1-2],n[3][1]") == "n1[1-2],n2[1-2],n31");
  CHECK(norm("n[1-3],n[2-5]") == "n[1-3,2-5]");
  CHECK(norm("n[8-10],n11,n012") == "n[8-11,012]");
  CHECK(norm("n[1-2],n[3-4]") == "n[1-4]");
  CHECK(norm("n[9-9],n[010-011]") == "n[9,010-011]");
  CHECK(norm("n[09-10],n[11-12]") == "n[09-12]");
  CHECK(norm("n[1-3],n4,n[5-6],m") == "n[1-6],m");
  CHECK(norm("n1[0-1],n1[2-3]") == "n1[0-3]");
  CHECK(norm("n[10-11],n1[2-3]") == "n[10-11],n1[2-3]");
  CHECK(norm("classt[01-05,07-16]") == "classt[01-05,07-16]");
  CHECK(norm("").empty());
  CHECK(!normalize_hostlist("gpu[1-2]-ib").has_value());
  CHECK(!normalize_hostlist("n[3-1]").has_value());
}

TEST_CASE("hostlist: the CLI expands and compresses, and rejects bad input with exit 2") {
  using jobgen::test::run_cli;
  auto r = run_cli({"hostlist", "expand", "classt[01-03]", "x,y"});
  CHECK(r.code == 0);
  CHECK(r.out == "classt01\nclasst02\nclasst03\nx\ny\n");
  r = run_cli({"hostlist", "compress", "classt01,classt02", "classt03", "classt[05-06]"});
  CHECK(r.code == 0);
  CHECK(r.out == "classt[01-03,05-06]\n");
  r = run_cli({"hostlist", "expand", "n[3-1]"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("jobgen: error: reversed range \"3-1\"", 0) == 0);
  r = run_cli({"hostlist", "compress", "gpu[1-2]-ib"});
  CHECK(r.code == 2);
  CHECK(r.err.rfind("jobgen: error: ", 0) == 0);
  r = run_cli({"hostlist", "expand"});
  CHECK(r.code == 2);
  // A whole argument in brackets is a hostlist, not CLI11's list syntax.
  r = run_cli({"hostlist", "expand", "[03-05,7]", "[8]"});
  CHECK(r.code == 0);
  CHECK(r.out == "03\n04\n05\n7\n8\n");
  r = run_cli({"hostlist", "compress", "[1-2][3-4]", "[5]"});
  CHECK(r.code == 0);
  CHECK(r.out == "1[3-4],2[3-4],5\n");
}
