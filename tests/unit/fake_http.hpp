// Recording fakes for the REST backend's tests: an HttpClient that answers from a script of
// (method, path-prefix) rules and records every request, a Clock whose sleeps are recorded, an
// Environment from a map and the in-memory FileSystem (fake_filesystem.hpp).
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "fake_clock.hpp"
#include "fake_filesystem.hpp"
#include "jobgen/sys/http.hpp"
#include "jobgen/sys/system.hpp"

namespace jobgen::test {

class FakeHttp final : public sys::HttpClient {
 public:
  struct Rule {
    std::string method;
    std::string path;  // matches when the request path (after the base URL) starts with it
    sys::HttpResult result;
    int times = -1;  // answers this many requests, -1 = all
  };

  // Rules are tried in the order they were added; a rule used up is skipped.
  void on(std::string method, std::string path, long status, std::string body, int times = -1) {
    rules.push_back({std::move(method), std::move(path),
                     sys::HttpResponse{status, {}, std::move(body)}, times});
  }
  void fail(std::string method, std::string path, std::string message, bool maybe_sent,
            int times = -1) {
    rules.push_back({std::move(method), std::move(path),
                     std::unexpected(sys::HttpFailure{std::move(message), maybe_sent}), times});
  }

  sys::HttpResult send(const sys::HttpRequest& request) override {
    requests.push_back(request);
    std::string path = request.url.substr(base.size());
    for (auto& rule : rules) {
      if (rule.times == 0 || rule.method != request.method || !path.starts_with(rule.path))
        continue;
      if (rule.times > 0) --rule.times;
      return rule.result;
    }
    return sys::HttpResponse{404, {}, "Unable find requested URL."};
  }

  // The paths (with query) of the recorded requests, e.g. "GET /slurm/v0.0.38/jobs".
  std::vector<std::string> calls() const {
    std::vector<std::string> out;
    for (const auto& r : requests) out.push_back(r.method + " " + r.url.substr(base.size()));
    return out;
  }

  std::string base = "http://rest.test:6820";
  std::vector<Rule> rules;
  std::vector<sys::HttpRequest> requests;
};

class MapEnvironment final : public sys::Environment {
 public:
  std::optional<std::string> get(std::string_view name) const override {
    auto it = vars.find(std::string(name));
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  std::map<std::string, std::string> vars;
};

// A JWT shaped like Slurm's (HS256 header, the given payload, a fake signature): jobgen only
// reads the payload.
inline std::string make_jwt(std::string_view payload_json) {
  auto b64url = [](std::string_view in) {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    unsigned buffer = 0;
    int bits = 0;
    for (const char ch : in) {
      buffer = (buffer << 8) | static_cast<unsigned char>(ch);
      bits += 8;
      while (bits >= 6) {
        bits -= 6;
        out += kAlphabet[(buffer >> bits) & 63];
      }
    }
    if (bits > 0) out += kAlphabet[(buffer << (6 - bits)) & 63];
    return out;
  };
  return b64url(R"({"alg":"HS256","typ":"JWT"})") + "." + b64url(payload_json) +
         ".c2lnbmF0dXJlLW5vdC1jaGVja2Vk";
}

}  // namespace jobgen::test
