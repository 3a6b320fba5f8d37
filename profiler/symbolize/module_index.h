// Internal to the symbolizer library. Fast address -> source frames for one module.
//
//  - Nothing is read when the index is made: the debug info on the first lookup, the symbol
//    table on the first lookup that DWARF does not name (a module with debug info may never
//    need it).
//  - A sorted function-symbol table built once from libdwfl's symtab (replaces the linear
//    dwfl_module_addrinfo): binary search by address.
//  - Per compile unit, built lazily on the first address that falls in it: every subprogram
//    and inlined_subroutine with its PC ranges (zero-length ranges dropped: GCC emits them and
//    they would corrupt inline chains), as a tree. An address descends from the containing
//    subprogram through the inlined subroutines whose ranges contain it; the chain gives the
//    inline frames, each caller's line being the callee's DW_AT_call_file/DW_AT_call_line.
//  - The CU is found with dwarf_addrdie (aranges, binary search); the innermost line comes from
//    the CU line table (dwarf_getsrc_die, binary search).
// Names are cleaned (demangled, parameters dropped) once per distinct raw name.
#pragma once

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "profiler/symbolize/symbolizer.h"

namespace heapkit::pprof {

class ModuleIndex {
 public:
  // mod must stay alive (owned by the Dwfl) as long as this index.
  ModuleIndex(Dwfl_Module* mod, std::string path);
  ~ModuleIndex();

  // pc: runtime address. Appends frames innermost first. Returns false if nothing is known
  // about pc (no symbol, no DWARF).
  bool Lookup(uint64_t pc, std::vector<SourceFrame>* out);

  const std::string& path() const { return path_; }

 private:
  struct Symbol {
    uint64_t start;
    uint64_t end;  // exclusive; == start for size-0 symbols
    const char* name;
  };
  struct Entry {
    const char* raw_name = nullptr;                     // linkage name if any, else DW_AT_name
    std::vector<std::pair<uint64_t, uint64_t>> ranges;  // DWARF addresses, [lo, hi)
    std::vector<uint32_t> children;
    int call_file = -1;
    int call_line = 0;
    int decl_line = 0;  // dwarf_decl_line: the function's own definition line, 0 if unknown
    bool Contains(uint64_t a) const {
      for (auto& r : ranges)
        if (a >= r.first && a < r.second) return true;
      return false;
    }
  };
  struct Top {
    uint64_t lo, hi;
    uint32_t entry;
  };
  struct CuIndex {
    Dwarf_Die cudie;
    std::vector<Entry> entries;
    std::vector<Top> tops;  // sorted by lo
    Dwarf_Files* files = nullptr;
    size_t nfiles = 0;
  };

  void LoadSymbols();
  CuIndex* GetCu(Dwarf_Die* cudie);
  void Walk(CuIndex* cu, Dwarf_Die* die, int parent, int depth);
  const Symbol* FindSymbol(uint64_t pc);  // loads the symbol table on first use
  Dwarf* GetDwarf();                      // loads the debug info on first use
  const std::string& Clean(const char* raw);
  SourceFrame SymbolFrame(const Symbol* sym, const std::string& name, std::string file,
                          int line) const;
  std::string FileName(CuIndex* cu, int index);
  // Lookup's steps with debug info: the frames of pc from its compile unit (false: DWARF does
  // not name it); the entries whose ranges hold dpc, outermost (a top-level function) first,
  // empty if none; one frame per entry of that chain, innermost first, each caller's line
  // being its callee's call site.
  bool LookupDwarf(uint64_t pc, std::vector<SourceFrame>* out);
  static std::vector<uint32_t> InlineChain(const CuIndex& cu, uint64_t dpc);
  void AppendInlineFrames(CuIndex* cu, const std::vector<uint32_t>& chain, uint64_t pc,
                          std::string file, int line, std::vector<SourceFrame>* out);

  Dwfl_Module* mod_;
  std::string path_;
  std::vector<Symbol> symbols_;
  bool symbols_loaded_ = false;
  Dwarf* dwarf_ = nullptr;
  Dwarf_Addr dwarf_bias_ = 0;
  bool dwarf_loaded_ = false;
  std::unordered_map<uint64_t, std::unique_ptr<CuIndex>> cus_;
  std::unordered_map<const char*, std::string> clean_names_;
};

}  // namespace heapkit::pprof
