// HTTP for jobgen (slurmrestd): a small request/response interface so that the REST backend can
// be tested with a recording fake, and one libcurl implementation.
//
// Contract: send() returns the response for ANY HTTP status (401, 500 ... are answers, not
// failures); it fails only when no answer arrived (connection refused, timeout, TLS). The
// failure says whether the request may have reached the server (`maybe_sent`), so callers can
// retry a POST only when it certainly did not. Header VALUES are never logged nor put into
// error messages (they carry tokens). Timeouts are milliseconds.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jobgen/util/error.hpp"

namespace jobgen::sys {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method = "GET";  // GET, POST, DELETE
  std::string url;  // http(s)://host:port/path?query (for a UNIX socket: http://localhost/...)
  std::string unix_socket;  // non-empty: connect to this socket path instead of url's host
  HttpHeaders headers;
  std::string body;
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds timeout{60000};  // whole transfer
  // A longer body ends the transfer as a failure (an endless or runaway answer must not eat the
  // memory); 0 = no limit. Bytes.
  std::size_t max_body_bytes = 0;
};

struct HttpResponse {
  long status = 0;
  HttpHeaders headers;  // names lower-cased
  std::string body;
  // First header with this (case-insensitive) name; "" if absent.
  std::string header(std::string_view name) const;
};

struct HttpFailure {
  std::string message;     // what went wrong, without header values
  bool maybe_sent = true;  // false only when the connection was never made
  bool repeatable = true;  // false: asking again gets the same (an answer over the size limit)
};

using HttpResult = std::expected<HttpResponse, HttpFailure>;

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  virtual HttpResult send(const HttpRequest& request) = 0;
};

// Where a base URL points: "http://h:p[/prefix]", "https://...", or "unix:/path/to.sock"
// (slurmrestd's rest_auth/local). For a socket, base_url is "http://localhost".
struct Endpoint {
  std::string base_url;     // without a trailing slash
  std::string unix_socket;  // empty for TCP
};
Expected<Endpoint> parse_endpoint(std::string_view url);

struct CurlOptions {
  bool verify_tls = true;  // peer and host verification for https
  std::string ca_bundle;   // optional CA file for sites with their own CA
};

// Makes the HTTP client a backend talks through (one per backend: its connections are reused).
class HttpClientFactory {
 public:
  virtual ~HttpClientFactory() = default;
  virtual std::unique_ptr<HttpClient> make(const CurlOptions& options) = 0;
};

// One CURL easy handle reused for every request, so keep-alive connections are reused between
// polls. Not thread-safe (one per thread).
class CurlHttpClient final : public HttpClient {
 public:
  explicit CurlHttpClient(CurlOptions options = {});
  ~CurlHttpClient() override;
  CurlHttpClient(const CurlHttpClient&) = delete;
  CurlHttpClient& operator=(const CurlHttpClient&) = delete;
  HttpResult send(const HttpRequest& request) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class CurlHttpClientFactory final : public HttpClientFactory {
 public:
  std::unique_ptr<HttpClient> make(const CurlOptions& options) override {
    return std::make_unique<CurlHttpClient>(options);
  }
};

}  // namespace jobgen::sys
