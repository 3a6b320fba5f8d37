#include "pprof-tool/render/dot_escape.h"

#include <graphviz/cgraph.h>
#include <gtest/gtest.h>

#include "synthetic.h"

namespace heapkit::pprof {
namespace {

// True if `body` can sit between double quotes without ending the literal early.
bool QuotesBalanced(const std::string& body) {
  size_t backslashes = 0;
  for (const char c : body) {
    if (c == '"' && backslashes % 2 == 0) return false;
    backslashes = c == '\\' ? backslashes + 1 : 0;
  }
  return backslashes % 2 == 0;  // a trailing lone backslash would escape the closing quote
}

TEST(DotEscape, EscapesQuoteBackslashAndNewline) {
  EXPECT_EQ(EscapeDotBody("a\"b"), "a\\\"b");
  EXPECT_EQ(EscapeDotBody("a\\b"), "a\\\\b");
  EXPECT_EQ(EscapeDotBody("a\nb"), "a\\nb");
  EXPECT_EQ(EscapeDotBody("tab\there\r"), "tab here ");
  EXPECT_EQ(QuoteDot("x"), "\"x\"");
  EXPECT_EQ(QuoteDot(""), "\"\"");
}

TEST(DotEscape, LeavesRecordAndHtmlCharactersAlone) {
  // Inside a quoted (non-record, non-HTML) label these are literal.
  EXPECT_EQ(EscapeDotBody("a<b>{c}|d"), "a<b>{c}|d");
}

TEST(DotEscape, GraphvizEscapesAreNeutralised) {
  // \N would be replaced by the node name, \l would left-justify: both must become literal.
  EXPECT_EQ(EscapeDotBody("\\N\\l"), "\\\\N\\\\l");
}

TEST(DotEscape, InvalidUtf8BecomesQuestionMark) {
  EXPECT_EQ(SanitizeUtf8("ok \xff\xfe."), "ok ??.");
  EXPECT_EQ(SanitizeUtf8("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");
  EXPECT_EQ(SanitizeUtf8("\xc3"), "?");            // truncated sequence
  EXPECT_EQ(SanitizeUtf8("\xc0\xaf"), "??");       // overlong encoding of '/'
  EXPECT_EQ(SanitizeUtf8("\xed\xa0\x80"), "???");  // UTF-16 surrogate
}

TEST(DotEscape, EveryNastyNameStaysInsideItsQuotes) {
  for (const char* name : testing::kNastyNames) {
    const std::string body = EscapeDotBody(name);
    EXPECT_TRUE(QuotesBalanced(body)) << body;
    EXPECT_EQ(body.find('\n'), std::string::npos) << body;
  }
}

TEST(DotEscape, GraphvizParsesEveryNastyNameBack) {
  // Feed each name to graphviz's own DOT parser as a node name and as a label; the graph must
  // parse and hold exactly one node, whose name is the escaped body with \" unescaped.
  for (const char* name : testing::kNastyNames) {
    const std::string dot = "digraph G { " + QuoteDot(name) + " [label=" + QuoteDot(name) + "] }\n";
    Agraph_t* g = agmemread(dot.c_str());
    ASSERT_NE(g, nullptr) << dot;
    EXPECT_EQ(agnnodes(g), 1) << dot;
    Agnode_t* n = agfstnode(g);
    std::string expected = EscapeDotBody(name);
    // cgraph's lexer only turns \" into "; other escapes are left for the label code.
    for (size_t p; (p = expected.find("\\\"")) != std::string::npos;) expected.replace(p, 2, "\"");
    EXPECT_EQ(std::string(agnameof(n)), expected);
    agclose(g);
  }
}

TEST(WrapFunctionName, ShortNamesUnchanged) {
  EXPECT_EQ(WrapFunctionName("main"), "main");
  EXPECT_EQ(WrapFunctionName("ns::Foo::bar()"), "ns::Foo::bar()");
}

TEST(WrapFunctionName, BreaksLongNamesAtTopLevelScopes) {
  const std::string name =
      "very_long_namespace::AnotherLongClassName<std::map<int, int>>::method()";
  const std::string wrapped = WrapFunctionName(name);
  EXPECT_NE(wrapped.find('\n'), std::string::npos);
  std::string joined;
  for (const char c : wrapped) {
    if (c != '\n') joined += c;
  }
  EXPECT_EQ(joined, name);  // only line breaks were added
  // No break inside the template arguments.
  EXPECT_NE(wrapped.find("std::map<int, int>"), std::string::npos);
}

TEST(WrapFunctionName, CapsHugeNames) {
  const std::string huge(1000, 'x');
  const std::string wrapped = WrapFunctionName(huge, 40, 160);
  EXPECT_EQ(wrapped.size(), 163u);
  EXPECT_EQ(wrapped.substr(160), "...");
}

}  // namespace
}  // namespace heapkit::pprof
