// Benchmark program: allocation-heavy C++ in the style of a source analyser (cppcheck,
// cc1plus): text tokenized into std::string tokens in a std::list, a std::map symbol table,
// an expression tree built by recursive descent with std::unique_ptr nodes, std::vector
// growth, all freed again; nothing leaks. Unlike alloc_heavy.cc (one call site, one stack
// depth) its allocations come from many call sites at stack depths that change from one
// allocation to the next, inside libstdc++ code built without frame pointers: the case in
// which the leak checker's per-thread walk memo misses and the stack is walked.
//
//   cxx_alloc [rounds]    (default 40; prints a checksum)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

struct Token {
  std::string text;
  int kind;
};

struct Node {
  std::string op;
  std::vector<std::unique_ptr<Node>> kids;
};

// A pseudo-random program text: identifiers (some longer than std::string's inline buffer),
// numbers, operators and parentheses, so that the parser below recurses to varying depths.
std::string MakeSource(uint64_t seed, int tokens) {
  static const char* const kWords[] = {"a",  "index", "value_of_the_counter",
                                       "b2", "tmp",   "a_rather_long_identifier_name",
                                       "x",  "result"};
  std::string s;
  int open = 0;
  for (int i = 0; i < tokens; ++i) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    switch (seed % 7) {
      case 0: s += kWords[(seed >> 8) % 8]; break;
      case 1: s += std::to_string((seed >> 12) % 100000); break;
      case 2: s += " + "; break;
      case 3: s += " * "; break;
      case 4:
        if (open < 8) {
          s += '(';
          ++open;
        }
        break;
      case 5:
        if (open > 0) {
          s += ')';
          --open;
        }
        break;
      default: s += kWords[(seed >> 20) % 8]; break;
    }
    s += ' ';
  }
  while (open-- > 0) s += ')';
  return s;
}

std::list<Token> Tokenize(const std::string& src) {
  std::list<Token> out;
  size_t i = 0;
  while (i < src.size()) {
    const char c = src[i];
    if (c == ' ') {
      ++i;
      continue;
    }
    size_t j = i + 1;
    if (c >= 'a' && c <= 'z') {
      while (j < src.size() && src[j] != ' ' && src[j] != '(' && src[j] != ')') ++j;
      out.push_back({src.substr(i, j - i), 1});
    } else if (c >= '0' && c <= '9') {
      while (j < src.size() && src[j] >= '0' && src[j] <= '9') ++j;
      out.push_back({src.substr(i, j - i), 2});
    } else {
      out.push_back({std::string(1, c), 3});
    }
    i = j;
  }
  return out;
}

using It = std::list<Token>::const_iterator;

std::unique_ptr<Node> ParseExpr(It& it, It end, int depth);

__attribute__((noinline)) std::unique_ptr<Node> ParsePrimary(It& it, It end, int depth) {
  auto n = std::make_unique<Node>();
  if (it == end) return n;
  if (it->text == "(" && depth < 200) {
    ++it;
    n->op = "paren";
    n->kids.push_back(ParseExpr(it, end, depth + 1));
    if (it != end && it->text == ")") ++it;
    return n;
  }
  n->op = it->text;
  ++it;
  return n;
}

__attribute__((noinline)) std::unique_ptr<Node> ParseExpr(It& it, It end, int depth) {
  auto n = std::make_unique<Node>();
  n->op = "expr";
  n->kids.push_back(ParsePrimary(it, end, depth));
  while (it != end && it->text != ")") {
    if (it->text == "+" || it->text == "*") {
      n->kids.push_back(std::make_unique<Node>(Node{it->text, {}}));
      ++it;
    }
    n->kids.push_back(ParsePrimary(it, end, depth));
  }
  return n;
}

void CountSymbols(const Node& n, std::map<std::string, int>& symbols) {
  if (!n.op.empty() && n.op[0] >= 'a' && n.op[0] <= 'z') ++symbols[n.op + "#" + n.op];
  for (const auto& k : n.kids) CountSymbols(*k, symbols);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 40;
  uint64_t sum = 0;
  for (int r = 0; r < rounds; ++r) {
    const std::string src = MakeSource(88172645463325252ULL + static_cast<uint64_t>(r), 20000);
    const std::list<Token> tokens = Tokenize(src);
    std::map<std::string, int> symbols;
    It it = tokens.begin();
    while (it != tokens.end()) {
      const std::unique_ptr<Node> tree = ParseExpr(it, tokens.end(), 0);
      CountSymbols(*tree, symbols);
      if (it != tokens.end()) ++it;  // a stray ')'
    }
    for (const auto& [name, count] : symbols) sum += name.size() * static_cast<uint64_t>(count);
    sum += tokens.size();
  }
  std::printf("%llu\n", static_cast<unsigned long long>(sum));
  return 0;
}
