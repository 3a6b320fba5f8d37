// The HTTP endpoint's admission pieces (profiler/http/): who is at the other end of a
// connection (peer_owner.h, both the sock_diag lookup and the /proc/net/tcp fallback), which
// addresses HEAPKIT_HTTP takes (listen_address.h), and who the policy admits
// (access_policy.h). End to end: tests/profiler/http/run_http.py (origin, uid, unix, ...).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "profiler/http/access_policy.h"
#include "profiler/http/listen_address.h"
#include "profiler/http/peer_owner.h"
#include "profiler/http/server_hooks.h"

namespace heapkit::prof::http {
namespace {

constexpr uid_t kNobody = 65534;

// A listener on the loopback address of `family`, its address in *address.
int Listen(int family, sockaddr_storage* address, socklen_t* length) {
  const int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  *address = {};
  if (family == AF_INET) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(address);
    v4->sin_family = AF_INET;
    v4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    *length = sizeof *v4;
  } else {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(address);
    v6->sin6_family = AF_INET6;
    v6->sin6_addr = in6addr_loopback;
    *length = sizeof *v6;
  }
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(address), *length), 0);
  EXPECT_EQ(listen(fd, 8), 0);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(address), length), 0);
  return fd;
}

// The owner of a connection made by a child that becomes `uid` before it connects, as each
// lookup sees it.
void ExpectOwner(int family, uid_t uid) {
  sockaddr_storage address;
  socklen_t length;
  const int listener = Listen(family, &address, &length);
  int hold[2];
  ASSERT_EQ(pipe(hold), 0);
  const pid_t child = fork();
  if (child == 0) {
    if (uid != geteuid() && (setgid(uid) != 0 || setuid(uid) != 0)) _exit(2);
    const int fd = socket(family, SOCK_STREAM, 0);
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), length) != 0) _exit(3);
    char byte;
    close(hold[1]);
    (void)!read(hold[0], &byte, 1);  // until the parent has looked
    _exit(0);
  }
  close(hold[0]);
  const int accepted = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(accepted, 0);
  for (bool netlink : {true, false}) {
    PeerLookup lookup(netlink);
    const PeerOwner owner = lookup.Find(accepted);
    EXPECT_EQ(owner.kind, PeerOwner::Kind::kLocal) << "netlink " << netlink;
    EXPECT_EQ(owner.uid, uid) << "netlink " << netlink;
  }
  close(hold[1]);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  close(accepted);
  close(listener);
}

TEST(PeerOwner, TcpPeerIsItsSocketsOwnerByEitherLookup) {
  ExpectOwner(AF_INET, geteuid());
  ExpectOwner(AF_INET6, geteuid());
  if (geteuid() != 0) GTEST_SKIP() << "another uid needs root";
  ExpectOwner(AF_INET, kNobody);
  ExpectOwner(AF_INET6, kNobody);
}

TEST(PeerOwner, UnixPeerFromPeerCredentials) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  PeerLookup lookup;
  const PeerOwner owner = lookup.Find(pair[0]);
  EXPECT_EQ(owner.kind, PeerOwner::Kind::kLocal);
  EXPECT_EQ(owner.uid, geteuid());
  close(pair[0]);
  close(pair[1]);
}

TEST(ListenAddress, PortsAreDigitsOnly) {
  for (const char* good : {"127.0.0.1:6060", ":0", ":00", "[::1]:65535", "localhost:1"}) {
    ListenAddress a;
    std::string error;
    EXPECT_TRUE(ParseListenAddress(good, &a, &error)) << good << ": " << error;
    EXPECT_TRUE(a.loopback) << good;
  }
  for (const char* bad : {":+0", ":-0", ": 0", ":0 ", ":0x10", ":", ":123456", ":65536",
                          "127.0.0.1", "[::1]6060", "example.com:80", "unix:relative", "unix:"}) {
    ListenAddress a;
    std::string error;
    EXPECT_FALSE(ParseListenAddress(bad, &a, &error)) << bad;
    EXPECT_EQ(error.find('\n'), std::string::npos);
    EXPECT_EQ(error.compare(0, 12, "HEAPKIT_HTTP"), 0) << error;
  }
  ListenAddress any;
  std::string error;
  ASSERT_TRUE(ParseListenAddress("0.0.0.0:6060", &any, &error));
  EXPECT_FALSE(any.loopback);
  ListenAddress path;
  ASSERT_TRUE(ParseListenAddress("unix:/run/app/heapkit.sock", &path, &error));
  EXPECT_TRUE(path.unix_socket);
  EXPECT_EQ(path.path, "/run/app/heapkit.sock");
}

TEST(AccessPolicy, UidsTokenAndOtherHosts) {
  ServerHooks hooks;
  hooks.allow_users = "4242, nobody";
  AccessPolicy policy;
  std::string error;
  ASSERT_TRUE(policy.Configure(hooks, false, &error)) << error;
  EXPECT_NE(policy.Description().find("uid 4242"), std::string::npos) << policy.Description();
  EXPECT_NE(policy.Description().find("token: none"), std::string::npos);
  RefusalReason reason;
  std::string line;
  const PeerOwner root{PeerOwner::Kind::kLocal, 0};
  const PeerOwner allowed{PeerOwner::Kind::kLocal, 4242};
  const PeerOwner other{PeerOwner::Kind::kLocal, 4343};
  const PeerOwner unknown{PeerOwner::Kind::kUnknown, 0};
  const PeerOwner remote{PeerOwner::Kind::kRemote, 0};
  EXPECT_TRUE(policy.Admits(root, "", &reason, &line));
  EXPECT_TRUE(policy.Admits(allowed, "", &reason, &line));
  EXPECT_FALSE(policy.Admits(other, "", &reason, &line));
  EXPECT_EQ(reason, RefusalReason::kUid);
  EXPECT_NE(line.find("uid 4343"), std::string::npos) << line;
  EXPECT_FALSE(policy.Admits(unknown, "", &reason, &line));
  EXPECT_EQ(reason, RefusalReason::kUnknownPeer);
  EXPECT_FALSE(policy.Admits(remote, "", &reason, &line));
  EXPECT_EQ(reason, RefusalReason::kRemote);
  // No token configured: a client's Authorization header changes nothing.
  EXPECT_FALSE(policy.Admits(other, "Bearer anything", &reason, &line));

  // A bind other hosts reach needs the token or HEAPKIT_HTTP_ALLOW_REMOTE.
  AccessPolicy reachable;
  EXPECT_FALSE(reachable.Configure(ServerHooks{}, true, &error));
  EXPECT_NE(error.find("HEAPKIT_HTTP_TOKEN_FILE"), std::string::npos) << error;
  ServerHooks remote_hooks;
  remote_hooks.allow_remote = "1";
  AccessPolicy open;
  ASSERT_TRUE(open.Configure(remote_hooks, true, &error)) << error;
  EXPECT_TRUE(open.Admits(remote, "", &reason, &line));
  EXPECT_FALSE(open.Admits(other, "", &reason, &line));  // this host: still the uid rule
  EXPECT_NE(open.Description().find("other hosts: any client"), std::string::npos);
  remote_hooks.allow_remote = "maybe";
  EXPECT_FALSE(AccessPolicy().Configure(remote_hooks, true, &error));
  ServerHooks no_such_user;
  no_such_user.allow_users = "no-such-user-of-this-host";
  EXPECT_FALSE(AccessPolicy().Configure(no_such_user, false, &error));
}

TEST(AccessPolicy, BearerTokenFromAPrivateFile) {
  char path[] = "/tmp/heapkit-token-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string token = "0123456789abcdef-token";
  ASSERT_EQ(write(fd, (token + "\n").data(), token.size() + 1),
            static_cast<ssize_t>(token.size() + 1));
  close(fd);
  ServerHooks hooks;
  hooks.token_file = path;
  AccessPolicy policy;
  std::string error;
  ASSERT_TRUE(policy.Configure(hooks, true, &error)) << error;  // reachable: the token suffices
  RefusalReason reason;
  std::string line;
  const PeerOwner other{PeerOwner::Kind::kLocal, 4343};
  const PeerOwner remote{PeerOwner::Kind::kRemote, 0};
  const PeerOwner root{PeerOwner::Kind::kLocal, 0};
  EXPECT_TRUE(policy.Admits(other, "Bearer " + token, &reason, &line));
  EXPECT_TRUE(policy.Admits(remote, "bearer  " + token, &reason, &line));
  EXPECT_FALSE(policy.Admits(remote, "", &reason, &line));
  EXPECT_EQ(reason, RefusalReason::kRemote);
  for (const std::string& wrong :
       {"Bearer " + token + "x", "Bearer " + token.substr(1), "Bearer x" + token.substr(1)}) {
    EXPECT_FALSE(policy.Admits(root, wrong, &reason, &line)) << wrong;
    EXPECT_EQ(reason, RefusalReason::kToken);
  }
  chmod(path, 0640);
  EXPECT_FALSE(AccessPolicy().Configure(hooks, false, &error));
  EXPECT_NE(error.find("group or others"), std::string::npos) << error;
  unlink(path);
}

}  // namespace
}  // namespace heapkit::prof::http
