// Compiled by CTest only (test/interpose/CMakeLists.txt): as it is it compiles; with
// WRONG_STRUCT or WRONG_STRINGS defined it must not, refused by records.def's row.
#include <cumemtrace/record_encode.h>

#include <string>

void write_symbol(std::string& out) {
  const cumemtrace::format::SymbolRecord r{0x401000, 3, 0};
#if defined(WRONG_STRUCT)
  // A StackNodeRecord where the row says SymbolRecord.
  cumemtrace::put_record<cumemtrace::format::RecordType::kSymbol>(out, cumemtrace::format::StackNodeRecord{1, 0, 2},
                                                                  "main", "a.c");
#elif defined(WRONG_STRINGS)
  // The function without its file: the row says 2 strings.
  cumemtrace::put_record<cumemtrace::format::RecordType::kSymbol>(out, r, "main");
#else
  cumemtrace::put_record<cumemtrace::format::RecordType::kSymbol>(out, r, "main", "a.c");
#endif
}
