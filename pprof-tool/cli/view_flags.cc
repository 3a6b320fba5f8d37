#include "pprof-tool/cli/view_flags.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <type_traits>

namespace heapkit::pprof {
namespace {

// The help text with its placeholders filled: "{nodes}" and "{default}" (the member's default).
std::string HelpText(const ViewField& field) {
  std::string help = field.help;
  auto replace = [&help](const std::string& token, const std::string& value) {
    size_t at = help.find(token);
    if (at != std::string::npos) help.replace(at, token.size(), value);
  };
  replace("{nodes}", std::to_string(kGraphNodeCount));
  std::visit(
      [&](auto member) {
        using T = std::remove_reference_t<decltype(ViewOptions().*member)>;
        if constexpr (std::is_arithmetic_v<T>) {
          char buf[32];
          snprintf(buf, sizeof buf, "%g", double(ViewOptions().*member));
          replace("{default}", buf);
        }
      },
      field.member);
  return help;
}

std::string FlagNames(const ViewField& field) {
  return std::string("--") + field.name + (field.alias ? std::string(",--") + field.alias : "");
}

}  // namespace

bool ViewChoicesGiven::Given(ViewMember member) const {
  return std::any_of(given_.begin(), given_.end(),
                     [&](const ViewField* f) { return f->member == member; });
}

bool ViewChoicesGiven::Check(std::string* error) const {
  for (const ViewField* field : given_) {
    if (std::count(given_.begin(), given_.end(), field) < 2) continue;
    std::string names;
    for (const ViewChoice& c : field->choices)
      names += (names.empty() ? "--" : ", --") + std::string(c.name);
    *error = "choose one of " + names;
    return false;
  }
  return true;
}

void DefineViewFlags(CLI::App& app, const char* group, ViewOptions* view, ViewChoicesGiven* given) {
  for (const ViewField& field : kViewFields) {
    if (std::string(field.group) != group) continue;
    std::visit(
        [&](auto member) {
          using T = std::remove_reference_t<decltype(view->*member)>;
          if constexpr (std::is_enum_v<T>) {
            for (const ViewChoice& choice : field.choices) {
              auto set = [view, member, given, &field, value = choice.value] {
                view->*member = T(value);
                given->Count(&field);
              };
              app.add_flag_callback(std::string("--") + choice.name, set, choice.help)
                  ->group(group);
            }
          } else if constexpr (std::is_same_v<T, bool>) {
            app.add_flag(FlagNames(field), view->*member, HelpText(field))->group(group);
          } else {
            app.add_option(FlagNames(field), view->*member, HelpText(field))->group(group);
          }
        },
        field.member);
  }
}

}  // namespace heapkit::pprof
