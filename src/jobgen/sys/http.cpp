#include "jobgen/sys/http.hpp"

#include <curl/curl.h>
#include <dlfcn.h>

#include <algorithm>
#include <cctype>

#include "jobgen/util/redact.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::sys {

namespace {

// libcurl is opened on first use, not linked: only the rest backend needs it, and loading it
// with its TLS, Kerberos and LDAP dependencies cost every other command (status, plan) about
// 5 MB of RSS and a third of its start-up time. The calls go through these pointers, so the
// argument types of the variadic setopt/getinfo are checked by hand below (long, not int).
struct Curl {
  decltype(&curl_global_init) global_init = nullptr;
  decltype(&curl_easy_init) easy_init = nullptr;
  decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&curl_easy_reset) easy_reset = nullptr;
  decltype(&curl_easy_setopt) easy_setopt = nullptr;
  decltype(&curl_easy_perform) easy_perform = nullptr;
  decltype(&curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&curl_easy_strerror) easy_strerror = nullptr;
  decltype(&curl_slist_append) slist_append = nullptr;
  decltype(&curl_slist_free_all) slist_free_all = nullptr;
  std::string error;  // why libcurl could not be used; empty when every pointer is set
};

template <typename F>
void bind(void* library, const char* name, F& target, std::string& error) {
  target = reinterpret_cast<F>(dlsym(library, name));
  // Appended, not "a" + name: g++ 12 -O2 misreads that temporary as a 32-byte object
  // (-Warray-bounds inside char_traits).
  if (target == nullptr && error.empty()) error.append("libcurl lacks ").append(name);
}

const Curl& curl_library() {
  static const Curl loaded = [] {
    Curl c;
    void* library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* why = dlerror();
      c.error = std::string("the rest backend needs libcurl, which cannot be loaded (") +
                (why != nullptr ? why : "libcurl.so.4") +
                "): install the Debian package libcurl4, or use the cli backend";
      return c;
    }
    bind(library, "curl_global_init", c.global_init, c.error);
    bind(library, "curl_easy_init", c.easy_init, c.error);
    bind(library, "curl_easy_cleanup", c.easy_cleanup, c.error);
    bind(library, "curl_easy_reset", c.easy_reset, c.error);
    bind(library, "curl_easy_setopt", c.easy_setopt, c.error);
    bind(library, "curl_easy_perform", c.easy_perform, c.error);
    bind(library, "curl_easy_getinfo", c.easy_getinfo, c.error);
    bind(library, "curl_easy_strerror", c.easy_strerror, c.error);
    bind(library, "curl_slist_append", c.slist_append, c.error);
    bind(library, "curl_slist_free_all", c.slist_free_all, c.error);
    if (c.error.empty()) c.global_init(CURL_GLOBAL_DEFAULT);
    return c;  // the library stays loaded for the life of the process
  }();
  return loaded;
}

struct BodySink {
  std::string* body;
  std::size_t limit;  // 0 = none
  bool too_long = false;
};

size_t write_body(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  const std::size_t n = size * count;
  if (sink->limit > 0 && sink->body->size() + n > sink->limit) {
    sink->too_long = true;
    return 0;  // libcurl ends the transfer (CURLE_WRITE_ERROR)
  }
  // Grow to at most the limit: a body near the limit then never holds twice the limit in memory
  // (std::string would double past it).
  std::string& body = *sink->body;
  if (sink->limit > 0 && body.size() + n > body.capacity())
    body.reserve(std::min(sink->limit, std::max(2 * body.capacity(), body.size() + n)));
  body.append(data, n);
  return n;
}

size_t write_header(char* data, size_t size, size_t count, void* user) {
  auto* headers = static_cast<HttpHeaders*>(user);
  std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) {
    headers->clear();  // a new response (after a redirect or 100-continue) starts over
  } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
    headers->emplace_back(util::lower(util::trim(line.substr(0, colon))),
                          std::string(util::trim(line.substr(colon + 1))));
  }
  return size * count;
}

// True when libcurl failed before anything could reach the server.
bool never_sent(CURLcode code) {
  return code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST ||
         code == CURLE_COULDNT_RESOLVE_PROXY || code == CURLE_UNSUPPORTED_PROTOCOL ||
         code == CURLE_URL_MALFORMAT || code == CURLE_SSL_CONNECT_ERROR ||
         code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE;
}

std::string where(const HttpRequest& request) {
  // Only scheme://host:port/path: a query could carry something private, headers always do,
  // and so does user:password@ in the authority.
  std::string url = util::redact_url(request.url.substr(0, request.url.find('?')));
  if (!request.unix_socket.empty()) return "unix:" + request.unix_socket + " (" + url + ")";
  return url;
}

}  // namespace

std::string HttpResponse::header(std::string_view name) const {
  std::string key = util::lower(name);
  for (const auto& [k, v] : headers)
    if (k == key) return v;
  return "";
}

Expected<Endpoint> parse_endpoint(std::string_view url) {
  url = util::trim(url);
  while (url.size() > 1 && url.back() == '/') url.remove_suffix(1);
  if (url.starts_with("unix:")) {
    std::string_view path = url.substr(5);
    if (path.starts_with("//")) path.remove_prefix(2);  // unix:///run/x.sock
    if (!path.starts_with("/"))
      return invalid("slurmrestd URL '" + util::redact_url(url) +
                     "': a UNIX socket needs an absolute path, e.g. unix:/run/slurmrestd.sock");
    return Endpoint{"http://localhost", std::string(path)};
  }
  if (url.starts_with("http://") || url.starts_with("https://")) {
    if (url.find("://") + 3 >= url.size())
      return invalid("slurmrestd URL '" + util::redact_url(url) + "' has no host");
    return Endpoint{std::string(url), ""};
  }
  return invalid("slurmrestd URL '" + util::redact_url(url) +
                 "' is not understood: use http://HOST:PORT, https://HOST:PORT or unix:/PATH");
}

struct CurlHttpClient::Impl {
  CurlOptions options;
  CURL* curl = nullptr;
};

CurlHttpClient::CurlHttpClient(CurlOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  const Curl& lib = curl_library();
  if (lib.error.empty()) impl_->curl = lib.easy_init();
}

CurlHttpClient::~CurlHttpClient() {
  if (impl_->curl) curl_library().easy_cleanup(impl_->curl);
}

HttpResult CurlHttpClient::send(const HttpRequest& request) {
  const Curl& lib = curl_library();
  if (!lib.error.empty()) return std::unexpected(HttpFailure{lib.error, false});
  CURL* curl = impl_->curl;
  if (!curl) return std::unexpected(HttpFailure{"libcurl could not be initialised", false});
  // Reset options but keep the connection cache: this is what makes polls reuse connections.
  lib.easy_reset(curl);

  HttpResponse response;
  char errbuf[CURL_ERROR_SIZE] = {};
  curl_slist* headers = nullptr;
  for (const auto& [name, value] : request.headers)
    headers = lib.slist_append(headers, (name + ": " + value).c_str());
  if (!request.body.empty() || request.method == "POST")
    headers = lib.slist_append(headers, "Expect:");  // no 100-continue round trip

  lib.easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  if (!request.unix_socket.empty())
    lib.easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, request.unix_socket.c_str());
  lib.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  lib.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  lib.easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  lib.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                  static_cast<long>(request.connect_timeout.count()));
  lib.easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
  lib.easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, impl_->options.verify_tls ? 1L : 0L);
  lib.easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, impl_->options.verify_tls ? 2L : 0L);
  if (!impl_->options.ca_bundle.empty())
    lib.easy_setopt(curl, CURLOPT_CAINFO, impl_->options.ca_bundle.c_str());
  lib.easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  BodySink sink{&response.body, request.max_body_bytes};
  lib.easy_setopt(curl, CURLOPT_WRITEFUNCTION, write_body);
  lib.easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  lib.easy_setopt(curl, CURLOPT_HEADERFUNCTION, write_header);
  lib.easy_setopt(curl, CURLOPT_HEADERDATA, &response.headers);
  if (request.method == "GET") {
    lib.easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else {
    lib.easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    if (!request.body.empty() || request.method == "POST") {
      lib.easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
      lib.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                      static_cast<curl_off_t>(request.body.size()));
    }
  }

  CURLcode code = lib.easy_perform(curl);
  lib.easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  lib.slist_free_all(headers);
  if (code != CURLE_OK && sink.too_long) {
    return std::unexpected(HttpFailure{request.method + " " + where(request) +
                                           ": the answer is longer than " +
                                           std::to_string(request.max_body_bytes >> 20) +
                                           " MiB, the limit (JOBGEN_REST_MAX_RESPONSE_MIB sets it)",
                                       true, false});
  }
  if (code != CURLE_OK) {
    std::string detail = errbuf[0] ? errbuf : lib.easy_strerror(code);
    std::string message = request.method + " " + where(request) + " failed: " + detail;
    if (code == CURLE_OPERATION_TIMEDOUT)
      message += " (no answer within " + std::to_string(request.timeout.count() / 1000) + " s)";
    if (code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE)
      message += "; if the site uses its own CA, set rest.ca_bundle in the cluster profile";
    return std::unexpected(HttpFailure{std::move(message), !never_sent(code)});
  }
  lib.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

}  // namespace jobgen::sys
