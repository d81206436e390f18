// JSON documents made of a trace's strings (report --json, diff --json, baselines, export
// chrome and jsonl, live --json): valid UTF-8 whatever bytes the trace held, every string
// and every key escaped by utf8_escaped (escape.h), the rule of every output
// (docs/cli.md, "Strings from a trace").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/escape.h"

namespace cumemtrace {

// `j` with utf8_escaped applied to every string and key.
template <class Json>
Json json_escaped(const Json& j) {
  if (j.is_string()) return utf8_escaped(j.template get_ref<const std::string&>());
  if (j.is_array()) {
    Json a = Json::array();
    for (const auto& v : j) a.push_back(json_escaped(v));
    return a;
  }
  if (j.is_object()) {
    Json o = Json::object();
    for (const auto& [k, v] : j.items()) o[utf8_escaped(k)] = json_escaped(v);
    return o;
  }
  return j;
}

// `j` as JSON text (`indent` as nlohmann's dump). Almost every document is valid UTF-8 as
// it is; only one that nlohmann refuses (type_error 316) is walked and escaped.
template <class Json>
std::string json_text(const Json& j, int indent = -1) {
  try {
    return j.dump(indent);
  } catch (const typename Json::type_error&) { return json_escaped(j).dump(indent); }
}

}  // namespace cumemtrace
