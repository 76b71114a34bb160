// sys::HttpClient: endpoint parsing, and the libcurl client against a tiny in-process HTTP server
// on a UNIX socket (the way slurmrestd's rest_auth/local is reached): status, headers, body,
// POST bodies, connection reuse, refused connections and timeouts.
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>

#include "jobgen/sys/http.hpp"

using namespace jobgen;

TEST_CASE("parse_endpoint: http, https, unix sockets and nonsense") {
  auto http = sys::parse_endpoint("http://127.0.0.1:6820/");
  REQUIRE(http);
  CHECK(http->base_url == "http://127.0.0.1:6820");
  CHECK(http->unix_socket.empty());
  auto https = sys::parse_endpoint(" https://rest.example.org:8443 ");
  REQUIRE(https);
  CHECK(https->base_url == "https://rest.example.org:8443");
  auto sock = sys::parse_endpoint("unix:/run/slurmrestd/slurmrestd.socket");
  REQUIRE(sock);
  CHECK(sock->base_url == "http://localhost");
  CHECK(sock->unix_socket == "/run/slurmrestd/slurmrestd.socket");
  auto sock3 = sys::parse_endpoint("unix:///run/x.sock");
  REQUIRE(sock3);
  CHECK(sock3->unix_socket == "/run/x.sock");
  CHECK_FALSE(sys::parse_endpoint("unix:relative.sock"));
  CHECK_FALSE(sys::parse_endpoint("ftp://x"));
  CHECK_FALSE(sys::parse_endpoint("http://"));
  CHECK(sys::parse_endpoint("127.0.0.1:6820").error().message.find("http://HOST:PORT") !=
        std::string::npos);
}

TEST_CASE("HttpResponse::header is case-insensitive") {
  sys::HttpResponse r{200, {{"content-type", "application/json"}}, ""};
  CHECK(r.header("Content-Type") == "application/json");
  CHECK(r.header("X-Missing").empty());
}

namespace {

// Serves HTTP/1.1 keep-alive on a UNIX socket: answers every request with 200 and a body that
// echoes the method, path, the X-Test header and the request body. Counts connections.
class SocketServer {
 public:
  explicit SocketServer(bool silent = false) : silent_(silent) {
    path_ = (std::filesystem::temp_directory_path() / ("jobgen-http-" + std::to_string(::getpid()) +
                                                       "-" + std::to_string(counter_++) + ".sock"))
                .string();
    ::unlink(path_.c_str());
    fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path_.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd_, 4) == 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~SocketServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    ::unlink(path_.c_str());
  }
  const std::string& path() const { return path_; }
  int connections() const { return connections_; }

 private:
  void serve() {
    while (!stop_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      ++connections_;
      std::string buf;
      char chunk[4096];
      while (!stop_) {
        auto head_end = buf.find("\r\n\r\n");
        if (head_end != std::string::npos) {
          std::string head = buf.substr(0, head_end);
          size_t length = 0;
          if (auto p = head.find("Content-Length: "); p != std::string::npos)
            length = std::stoul(head.substr(p + 16));
          if (buf.size() >= head_end + 4 + length) {
            std::string body = buf.substr(head_end + 4, length);
            buf.erase(0, head_end + 4 + length);
            std::string line = head.substr(0, head.find("\r\n"));
            std::string xtest;
            if (auto p = head.find("X-Test: "); p != std::string::npos)
              xtest = head.substr(p + 8, head.find("\r\n", p) - p - 8);
            std::string answer = line + "|" + xtest + "|" + body;
            std::string response =
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Reply: yes\r\n"
                "Content-Length: " +
                std::to_string(answer.size()) + "\r\n\r\n" + answer;
            if (!silent_) (void)!::write(c, response.data(), response.size());
            continue;
          }
        }
        auto n = ::read(c, chunk, sizeof chunk);
        if (n <= 0) break;
        buf.append(chunk, static_cast<size_t>(n));
      }
      ::close(c);
    }
  }

  static inline std::atomic<int> counter_{0};
  bool silent_;
  std::string path_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

}  // namespace

TEST_CASE("CurlHttpClient over a UNIX socket: answers, POST bodies, one reused connection") {
  SocketServer server;
  sys::CurlHttpClient client;
  sys::HttpRequest get;
  get.url = "http://localhost/slurm/v0.0.38/ping";
  get.unix_socket = server.path();
  get.headers = {{"X-Test", "one"}};
  auto first = client.send(get);
  REQUIRE(first);
  CHECK(first->status == 200);
  CHECK(first->body == "GET /slurm/v0.0.38/ping HTTP/1.1|one|");
  CHECK(first->header("x-reply") == "yes");

  sys::HttpRequest post = get;
  post.method = "POST";
  post.url = "http://localhost/slurm/v0.0.38/job/submit";
  post.headers = {{"X-Test", "two"}, {"Content-Type", "application/json"}};
  post.body = R"({"job":{}})";
  auto second = client.send(post);
  REQUIRE(second);
  CHECK(second->body == R"(POST /slurm/v0.0.38/job/submit HTTP/1.1|two|{"job":{}})");

  sys::HttpRequest del = get;
  del.method = "DELETE";
  del.url = "http://localhost/slurm/v0.0.38/job/42";
  auto third = client.send(del);
  REQUIRE(third);
  CHECK(third->body == "DELETE /slurm/v0.0.38/job/42 HTTP/1.1|one|");
  CHECK(server.connections() == 1);  // keep-alive: the easy handle reused its connection
}

TEST_CASE("CurlHttpClient: refused connections were never sent, timeouts may have been") {
  sys::CurlHttpClient client;
  sys::HttpRequest request;
  request.url = "http://localhost/slurm/v0.0.38/ping";
  request.unix_socket = "/nonexistent/jobgen-test.sock";
  request.headers = {{"X-SLURM-USER-TOKEN", "secret-token-value"}};
  auto refused = client.send(request);
  REQUIRE_FALSE(refused);
  CHECK_FALSE(refused.error().maybe_sent);
  CHECK(refused.error().message.find("/nonexistent/jobgen-test.sock") != std::string::npos);
  CHECK(refused.error().message.find("secret-token-value") == std::string::npos);

  SocketServer silent(true);
  request.unix_socket = silent.path();
  request.timeout = std::chrono::milliseconds(300);
  auto timed_out = client.send(request);
  REQUIRE_FALSE(timed_out);
  CHECK(timed_out.error().maybe_sent);
  CHECK(timed_out.error().message.find("timed out") != std::string::npos);
  CHECK(timed_out.error().message.find("secret-token-value") == std::string::npos);
}
