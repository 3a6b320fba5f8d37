#include "profiler/symbolize/binary_lookup.h"

#include <gtest/gtest.h>

namespace heapkit::pprof {
namespace {

TEST(BinaryLookup, SymbolPathByBuildIdThenBaseNameThenRecordedPath) {
  EXPECT_EQ(CandidateFiles("/opt/app/bin/server", "ab12cd", {"/syms", "/more"}),
            (std::vector<std::string>{"/syms/.build-id/ab/12cd", "/syms/.build-id/ab/12cd.debug",
                                      "/syms/server", "/more/.build-id/ab/12cd",
                                      "/more/.build-id/ab/12cd.debug", "/more/server",
                                      "/opt/app/bin/server"}));
}

TEST(BinaryLookup, NoRecordedBuildIdMeansBaseNameOnly) {
  EXPECT_EQ(CandidateFiles("/lib/libx.so.1", "", {"/syms", ""}),
            (std::vector<std::string>{"/syms/libx.so.1", "/lib/libx.so.1"}));
  EXPECT_EQ(CandidateFiles("/lib/libx.so.1", "", {}), (std::vector<std::string>{"/lib/libx.so.1"}));
}

// A profile.proto's mapping names any build-id string; only hex ones become .build-id paths.
TEST(BinaryLookup, NonHexBuildIdNeverBecomesAPath) {
  EXPECT_EQ(CandidateFiles("/lib/libx.so.1", "../../../../etc/shadow", {"/syms"}),
            (std::vector<std::string>{"/syms/libx.so.1", "/lib/libx.so.1"}));
  EXPECT_EQ(CandidateFiles("/lib/libx.so.1", "ab/../cd", {"/syms"}),
            (std::vector<std::string>{"/syms/libx.so.1", "/lib/libx.so.1"}));
}

TEST(BinaryLookup, DebuginfoPathKeepsAbsoluteDirectoriesBeforeUsrLibDebug) {
  EXPECT_EQ(DebuginfoPath({}), ":.debug:/usr/lib/debug");
  EXPECT_EQ(DebuginfoPath({"/a", "rel", "/b:c", "/d"}), ":.debug:/a:/d:/usr/lib/debug");
}

}  // namespace
}  // namespace heapkit::pprof
