// The C++ runtime, referenced weakly: libheapkit_minimal.so depends on libc alone.
//
// A C program that preloads the allocator must not pay for loading libstdc++, libm and
// libgcc_s (every process of a build or a shell script would). The allocator needs the C++
// runtime only on paths that only C++ code reaches: operator new's failure path (the
// new_handler, throwing std::bad_alloc, catching it in the nothrow forms), the typeinfo of the
// public MallocExtension class, and the std::string/std::vector arguments of its methods. A
// program that reaches those paths is a C++ program, so libstdc++ is loaded and the weak
// references below resolve to it; a C program never calls them and they stay null.
//
// Include this header in every translation unit of the allocator that references one of these
// symbols (the binding is per object file: one strong reference anywhere keeps the dependency).
// The tests alloc.e2e.override.minimal_needs_only_libc and
// alloc.e2e.override.full_needs_only_libc check the shared libraries' DT_NEEDED lists; profiler/
// and heapcheck/ include this header in every translation unit of libheapkit.so (forced, from their
// CMakeLists).
#pragma once

// Undefined symbols a TU may reference, made weak. The list is what the compiler emits for
// exceptions (personality, unwinding, allocation/throw/catch of the exception object), the
// new_handler, std::bad_alloc's vtable/typeinfo/destructor (and, at -O0, where its inline
// constructor is not inlined, std::exception's vtable), the class_type_info vtable of
// polymorphic classes with RTTI, the throw helpers of inline std::string/std::vector code,
// std::nothrow (only its address is passed; operator new's nothrow forms never read it), and,
// at -O0, std::allocator<char>'s destructor (libstdc++ instantiates it explicitly, so unoptimised
// code calls it instead of inlining it): the destructor of the symbolizer's SymbolSearch, which
// heapcheck/leak_symbols.cc destroys empty (its std::string members reference it; no string is
// destroyed, so it is never called).
__asm__(
    ".weak __gxx_personality_v0\n"
    ".weak _Unwind_Resume\n"
    ".weak __cxa_allocate_exception\n"
    ".weak __cxa_throw\n"
    ".weak __cxa_begin_catch\n"
    ".weak __cxa_end_catch\n"
    ".weak __cxa_pure_virtual\n"
    ".weak _ZSt15get_new_handlerv\n"
    ".weak _ZTISt9bad_alloc\n"
    ".weak _ZTVSt9bad_alloc\n"
    ".weak _ZNSt9bad_allocD1Ev\n"
    ".weak _ZTVSt9exception\n"
    ".weak _ZNSaIcED1Ev\n"
    ".weak _ZNSaIcED2Ev\n"
    ".weak _ZTVN10__cxxabiv117__class_type_infoE\n"
    ".weak _ZTVN10__cxxabiv120__si_class_type_infoE\n"
    ".weak _ZSt17__throw_bad_allocv\n"
    ".weak _ZSt20__throw_length_errorPKc\n"
    ".weak _ZSt28__throw_bad_array_new_lengthv\n"
    ".weak _ZSt7nothrow\n");

namespace heapkit::internal {

// The same symbols seen from C++ as weak objects, so that their addresses can be tested (the
// compiler assumes any function it knows of is non-null). They are null only in a process that
// never loaded the C++ runtime (a C program calling tc_new, a static link whose libstdc++.a
// members were not pulled in): there operator new's failure path must neither call the
// new_handler nor throw.
extern "C" const char heapkit_weak_cxa_throw __asm__("__cxa_throw") __attribute__((weak));
extern "C" const char heapkit_weak_get_new_handler __asm__("_ZSt15get_new_handlerv")
    __attribute__((weak));

inline bool CxxRuntimeLoaded() {
  return &heapkit_weak_cxa_throw != nullptr && &heapkit_weak_get_new_handler != nullptr;
}

}  // namespace heapkit::internal
