// UTF-8 at the profile.proto boundary. profile.proto's strings are proto3 `string`s, which must
// be valid UTF-8: protobuf's C++ parser rejects a message with one invalid string (go pprof's
// Go decoder does not check). Symbol and file names are bytes, not always UTF-8 (a Latin-1
// source file name, a mangled name with a raw byte). So the reader takes the string table as
// bytes (profile_reader.cc) and the writer stores only valid UTF-8: a byte that is not part of
// a valid sequence is written as the character with that code point (Latin-1: 0xE9 -> "é"), so
// distinct names stay distinct.
#pragma once

#include <string>
#include <string_view>

namespace heapkit::pprof {

// Well-formed UTF-8 (no overlong forms, surrogates or code points above U+10FFFF), as protobuf
// checks it.
bool IsValidUtf8(std::string_view s);

// `s` when it is valid; else every byte outside a valid sequence replaced as above.
std::string ToValidUtf8(std::string_view s);

}  // namespace heapkit::pprof
