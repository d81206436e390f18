// A JSON object whose keys are added one by one without copying the values already in it.
//
// Why: nlohmann's ordered_json keeps an object's keys in a std::vector of
// pair<const std::string, json>. Such a pair has no non-throwing move (its key is const),
// so each time that vector grows it copies every value already in it, deeply: an object
// written as an initializer list grows a key at a time, and the page's data object copied
// its moments' address maps whole (14 % of `html` with 100 k allocations live:
// docs/performance.md, "`html`: one replay, and the page's data never copied"). Reserved
// for all its keys, it never grows.
#pragma once

#include <cstddef>

namespace cumemtrace {

// An empty object with room for `keys` keys; add them with o["key"] = std::move(value).
template <class Json>
Json reserved_object(size_t keys) {
  Json o = Json::object();
  o.template get_ref<typename Json::object_t&>().reserve(keys);
  return o;
}

}  // namespace cumemtrace
