// A real C++ source for the gcc test: templates, containers, algorithms.
#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

template <typename T>
struct Matrix {
  size_t n;
  std::vector<T> v;
  explicit Matrix(size_t size) : n(size), v(size * size) {}
  T& at(size_t i, size_t j) { return v[i * n + j]; }
  Matrix operator*(const Matrix& o) const {
    Matrix r(n);
    for (size_t i = 0; i < n; ++i)
      for (size_t k = 0; k < n; ++k)
        for (size_t j = 0; j < n; ++j) r.v[i * n + j] += v[i * n + k] * o.v[k * n + j];
    return r;
  }
};

int main() {
  unsigned x = 7;
  auto rnd = [&] { return x = x * 1664525u + 1013904223u; };
  std::map<std::string, int> counts;
  std::unordered_map<int, std::set<int>> groups;
  std::vector<std::string> words;
  for (int i = 0; i < 20000; ++i) {
    std::string w = "w" + std::to_string(rnd() % 3000);
    counts[w]++;
    groups[int(rnd() % 50)].insert(int(rnd() % 1000));
    words.push_back(w);
  }
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  int matches = 0;
  for (auto& w : words) matches += w.size() == 4 && (w[1] == '1' || w[1] == '2');
  Matrix<long> m(40);
  for (size_t i = 0; i < 40; ++i)
    for (size_t j = 0; j < 40; ++j) m.at(i, j) = long((i * 31 + j * 17) % 11);
  Matrix<long> p = m * m * m;
  long trace = 0;
  for (size_t i = 0; i < 40; ++i) trace += p.at(i, i);
  size_t group_total = 0;
  for (auto& [k, s] : groups) group_total += s.size() * size_t(k);
  printf("distinct %zu matches %d trace %ld groups %zu max %s\n", words.size(), matches, trace,
         group_total, std::max_element(counts.begin(), counts.end(), [](auto& a, auto& b) {
                        return a.second < b.second;
                      })->first.c_str());
  return 0;
}
