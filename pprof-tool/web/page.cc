#include "pprof-tool/web/page.h"

#include "pprof-tool/render/flame_graph.h"
#include "pprof-tool/web/page_assets.h"

namespace heapkit::pprof {
namespace {

struct MenuEntry {
  const char* path;
  const char* label;
};
constexpr MenuEntry kMenu[] = {
    {"/ui/", "Graph"},    {"/ui/top", "Top"},       {"/ui/flamegraph", "Flame Graph"},
    {"/ui/peek", "Peek"}, {"/ui/source", "Source"}, {"/ui/timeline", "Timeline"}};

std::string Input(const char* name, const char* label, const std::string& value) {
  return std::string("<label>") + label + " <input name=\"" + name + "\" value=\"" +
         EscapeXml(value) + "\"></label>";
}

// A field of the settings form: a check box for a bool option, a choice for an enum option,
// else a text input.
std::string Setting(const ViewField& field, const ViewOptions& view, bool heapcheck) {
  const std::string value = ParameterText(field, view);
  if (std::holds_alternative<bool ViewOptions::*>(field.member)) {
    return std::string("<label>") + field.name + " <input type=\"checkbox\" name=\"" + field.url +
           "\" value=\"true\"" + (value.empty() ? "" : " checked") + "></label>";
  }
  if (field.choices.empty()) return Input(field.url, field.name, value);
  std::string out = std::string("<select name=\"") + field.url + "\">";
  for (const ViewChoice& c : field.choices) {
    // Leak-checker dumps have in-use values only.
    const bool alloc = std::string(c.name).rfind("alloc", 0) == 0;
    if (heapcheck && field.member == ViewMember(&ViewOptions::sample_type) && alloc) continue;
    out +=
        std::string("<option") + (value == c.name ? " selected" : "") + ">" + c.name + "</option>";
  }
  return out + "</select>";
}

// The view options that have a URL parameter (report/view_options.h), in the table's order.
std::string Settings(const Page& page) {
  std::string out;
  for (const ViewField& field : kViewFields) {
    if (field.url == nullptr) continue;
    out += Setting(field, page.query.view, page.heapcheck);
  }
  return out;
}

// Several dumps: which one is shown (or their sum), and which one is subtracted from it.
std::string DumpSelects(const ViewQuery& q, int latest) {
  const std::vector<int>& numbers = q.dump_numbers;
  if (numbers.size() < 2) return "";
  auto option = [](const std::string& value, const std::string& label, bool selected) {
    return "<option value=\"" + value + "\"" + (selected ? " selected" : "") + ">" + label +
           "</option>";
  };
  std::string dump = "<label>dump <select name=\"dump\">";
  std::string base = "<label>base <select name=\"base\">" + option("", "none", q.base < 0);
  for (size_t i = 0; i < numbers.size(); ++i) {
    const std::string n = std::to_string(numbers[i]);
    dump += option(n, int(i) == latest ? n + " (latest)" : n, q.dump == int(i));
    base += option(n, n, q.base == int(i));
  }
  dump += option("all", "all (sum)", q.dump < 0) + "</select></label>";
  return dump + base + "</select></label>";
}

}  // namespace

std::string ErrorHtml(const std::string& message) {
  return "<p class=\"error\">" + EscapeXml(message) + "</p>";
}

std::string PageHtml(const Page& page) {
  const ViewQuery& q = page.query;
  std::string query = q.Encode();
  std::string out = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" +
                    EscapeXml(page.title) + "</title><style>" + kPageCss +
                    "</style></head>\n<body>\n<div id=\"menu\"><b>pprof-tool</b>";
  for (const MenuEntry& m : kMenu) {
    if (std::string(m.path) == "/ui/timeline" && !page.timeline) continue;
    std::string lq = q.Encode();
    out += std::string("<a href=\"") + m.path + (lq.empty() ? "" : "?" + EscapeXml(lq)) + "\"" +
           (page.view_path == m.path ? " class=\"active\"" : "") + ">" + m.label + "</a>";
  }
  out += "<form method=\"get\" action=\"" + page.view_path + "\">" + Settings(page) +
         DumpSelects(q, page.latest_dump);
  if (page.window) out += Input("window", "window (s, T0:T1)", q.window);
  out += "<button type=\"submit\">Apply</button></form></div>\n<div id=\"content\">\n<h2>" +
         EscapeXml(page.title) + "</h2>\n<div id=\"legend\">";
  for (const std::string& line : page.legend) out += EscapeXml(line) + "<br>";
  out += "</div>\n" + page.body_html + "\n</div>\n<script>" + kPageScript +
         "</script>\n</body></html>\n";
  return out;
}

}  // namespace heapkit::pprof
