#include "agent/providers/http_client.h"
#include "engine/process/process_runner.h"
#include "engine/system/python_environment.h"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace kwb;
using namespace kwb::agent;

namespace {

// A loopback echo server in Python (stdlib only), started for the duration of one test.
class EchoServer {
public:
    EchoServer() {
        const char* script = R"PY(
import http.server, json, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def _reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        self._reply(404 if self.path == "/missing" else 200, {"path": self.path})
    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length).decode()
        self._reply(200, {"body": body, "auth": self.headers.get("Authorization", "")})
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
)PY";
        int out[2];
        if (pipe(out) != 0)
            return;
        pid_ = fork();
        if (pid_ == 0) {
            dup2(out[1], STDOUT_FILENO);
            close(out[0]);
            const std::string python = KWB_TEST_EXPECTED_PYTHON;
            execl(python.c_str(), python.c_str(), "-c", script, static_cast<char*>(nullptr));
            _exit(127);
        }
        close(out[1]);
        // Read up to the newline, and keep the pipe open while the server lives: closing it
        // early can break the server's own write of the port.
        outFd_ = out[0];
        std::string line;
        char c = 0;
        while (line.size() < 16 && read(outFd_, &c, 1) == 1 && c != '\n')
            line.push_back(c);
        port_ = line.empty() ? 0 : std::atoi(line.c_str());
    }
    ~EchoServer() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        if (outFd_ >= 0)
            close(outFd_);
    }
    int port() const { return port_; }
    std::string url(const std::string& path) const {
        return "http://127.0.0.1:" + std::to_string(port_) + path;
    }

private:
    pid_t pid_ = -1;
    int port_ = 0;
    int outFd_ = -1;
};

} // namespace

TEST(HttpClient, GetAndPostAgainstALoopbackServer) {
    EchoServer server;
    ASSERT_GT(server.port(), 0);
    HttpClient client;
    HttpResponse get = client.send(
        {"GET", server.url("/hello"), {}, "", std::chrono::seconds(10), std::chrono::seconds(5)});
    ASSERT_TRUE(get.ok()) << get.error << " status " << get.status;
    EXPECT_NE(get.body.find("/hello"), std::string::npos);

    HttpResponse post = client.send({"POST",
                                     server.url("/v1/chat"),
                                     {{"Authorization", "Bearer k"}},
                                     "{\"x\":1}",
                                     std::chrono::seconds(10),
                                     std::chrono::seconds(5)});
    ASSERT_TRUE(post.ok()) << post.error;
    EXPECT_NE(post.body.find("{\\\"x\\\":1}"), std::string::npos) << post.body;
    EXPECT_NE(post.body.find("Bearer k"), std::string::npos);

    HttpResponse missing = client.send(
        {"GET", server.url("/missing"), {}, "", std::chrono::seconds(10), std::chrono::seconds(5)});
    EXPECT_TRUE(missing.error.empty());
    EXPECT_EQ(missing.status, 404);
    EXPECT_FALSE(missing.ok());
}

TEST(HttpClient, ConnectionRefusedIsAnErrorValue) {
    HttpClient client;
    // Port 1 on loopback: nothing listens there.
    HttpResponse r = client.send(
        {"GET", "http://127.0.0.1:1/", {}, "", std::chrono::seconds(5), std::chrono::seconds(2)});
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.status, 0);
    EXPECT_FALSE(r.error.empty());
}

TEST(HttpClient, VersionNamesLibcurl) {
    EXPECT_EQ(curlVersionText().rfind("libcurl ", 0), 0u);
}
