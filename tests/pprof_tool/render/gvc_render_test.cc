#include "pprof-tool/render/gvc_render.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "pprof-tool/render/dot_writer.h"
#include "synthetic.h"
#include "test_util.h"

namespace heapkit::pprof {
namespace {

std::string PlainDot() {
  DotStyle s;
  s.title = "synthetic";
  s.legend = testing::TestLegend();
  return WriteDot(testing::PlainGraph(), s);
}

std::string Render(const std::string& format) {
  std::string image, error;
  EXPECT_TRUE(RenderDotInProcess(PlainDot(), format, &image, &error)) << error;
  EXPECT_TRUE(error.empty()) << error;
  return image;
}

uint32_t BigEndian32(const std::string& s, size_t at) {
  return (uint32_t{static_cast<unsigned char>(s[at])} << 24) |
         (uint32_t{static_cast<unsigned char>(s[at + 1])} << 16) |
         (uint32_t{static_cast<unsigned char>(s[at + 2])} << 8) |
         uint32_t{static_cast<unsigned char>(s[at + 3])};
}

TEST(GvcRender, SvgIsXmlWithTheTopFunctionsAndNastyNames) {
  if (!testing::HavePython()) GTEST_SKIP() << "python3 with xml.etree not available";
  testing::TempDir dir;
  const std::string svg = Render("svg");
  ASSERT_GT(svg.size(), 2000u);
  testing::WriteFile(dir.File("g.svg"), svg);
  int status = 0;
  const std::string texts = testing::Probe("texts", dir.File("g.svg"), &status);
  ASSERT_EQ(status, 0) << texts;
  // Top functions by flat, as graphviz drew them (labels may be wrapped at "::").
  EXPECT_NE(texts.find("std::vector<std::pair<int, std::string>>::"), std::string::npos) << texts;
  EXPECT_NE(texts.find("Parser<\"x\">::{lambda()#1}::operator()"), std::string::npos) << texts;
  EXPECT_NE(texts.find("operator<<(std::ostream&, Foo const&)"), std::string::npos) << texts;
  EXPECT_NE(texts.find("Server::Handle(Request const&)"), std::string::npos) << texts;
  // The nasty name's pieces come out literally: | { } " \ and the embedded newline as a break.
  EXPECT_NE(texts.find("weird|name{}\"quoted\"\\back\n"), std::string::npos) << texts;
  EXPECT_NE(texts.find("Dropped 3 nodes"), std::string::npos) << texts;
}

// Each render used to make and free its own graphviz context; the pango plugin then read the
// freed font name of the previous one on the next render (a use after free ASan reports:
// tests/scripts/sanitizer_builds.sh address). The web UI renders many graphs in one process.
TEST(GvcRender, ManyRendersInOneProcess) {
  for (const char* format : {"svg", "png", "svg", "pdf"}) {
    const std::string image = Render(format);
    EXPECT_GT(image.size(), 1000u) << format;
  }
}

TEST(GvcRender, PngHasMagicAndSaneSize) {
  const std::string png = Render("png");
  ASSERT_GT(png.size(), 24u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  const uint32_t width = BigEndian32(png, 16), height = BigEndian32(png, 20);
  EXPECT_GT(width, 200u);
  EXPECT_LT(width, 10000u);
  EXPECT_GT(height, 200u);
  EXPECT_LT(height, 10000u);
  EXPECT_GT(png.size(), 5000u);
  EXPECT_LT(png.size(), 5u << 20);
}

TEST(GvcRender, PdfHasMagicAndTrailer) {
  const std::string pdf = Render("pdf");
  EXPECT_EQ(pdf.substr(0, 5), "%PDF-");
  EXPECT_NE(pdf.find("%%EOF", pdf.size() > 64 ? pdf.size() - 64 : 0), std::string::npos);
  EXPECT_GT(pdf.size(), 2000u);
  EXPECT_LT(pdf.size(), 5u << 20);
}

TEST(GvcRender, PostScriptHasMagicAndTopFunction) {
  const std::string ps = Render("ps");
  EXPECT_EQ(ps.substr(0, 11), "%!PS-Adobe-");
  EXPECT_NE(ps.find("Server::Handle"), std::string::npos);
  EXPECT_NE(ps.find("%%EOF"), std::string::npos);
  EXPECT_LT(ps.size(), 5u << 20);
}

TEST(GvcRender, UnknownFormatIsOneLineError) {
  std::string image, error;
  EXPECT_FALSE(RenderDotInProcess(PlainDot(), "no-such-format", &image, &error));
  EXPECT_NE(error.find("no-such-format"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(GvcRender, InvalidDotIsReported) {
  std::string image, error;
  EXPECT_FALSE(RenderDotInProcess("digraph { a -> ", "svg", &image, &error));
  EXPECT_NE(error.find("could not parse"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

// graphviz without its plugin configuration: GVBINDIR pointing at an empty directory. libgvc
// reads GVBINDIR once per process, so this runs in a child: this binary re-executed with
// HEAPKIT_RENDER_PLUGIN_CHILD=1, which makes it render once, print the outcome and exit before
// main (see PluginChild below).
TEST(GvcRender, MissingPluginConfigurationSaysHowToFixIt) {
  testing::TempDir empty;
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  self[n] = '\0';
  int status = 0;
  const std::string out = testing::RunCapture(
      "env GVBINDIR='" + empty.path() + "' HEAPKIT_RENDER_PLUGIN_CHILD=1 '" + self + "'", &status);
  EXPECT_EQ(status, 3) << out;  // the child's "render failed" status
  EXPECT_NE(out.find("Layout type: \"dot\" not recognized"), std::string::npos) << out;
  EXPECT_NE(out.find("plugin configuration is missing"), std::string::npos) << out;
  EXPECT_NE(out.find("`dot -c` as root"), std::string::npos) << out;
  EXPECT_NE(out.find("GVBINDIR=" + empty.path()), std::string::npos) << out;
  EXPECT_EQ(out.find('\n'), out.size() - 1) << "not one line: " << out;
}

// The child side of the test above: runs before main() when the marker variable is set.
const bool kPluginChild = [] {
  if (std::getenv("HEAPKIT_RENDER_PLUGIN_CHILD") == nullptr) return false;
  std::string image, error;
  const bool ok = RenderDotInProcess(PlainDot(), "svg", &image, &error);
  std::printf("%s\n", ok ? "rendered" : error.c_str());
  std::fflush(stdout);
  std::_Exit(ok ? 0 : 3);
}();

}  // namespace
}  // namespace heapkit::pprof
