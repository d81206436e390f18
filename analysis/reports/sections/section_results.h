// What a section computes that no other part of the report reads, held in the report by its
// type: a section's figures are a type in its own files, so a new section needs no field in
// report.h (docs/architecture.md, "Common tasks").
#pragma once

#include <any>
#include <map>
#include <typeindex>

namespace cumemtrace {

class SectionResults {
 public:
  // The section's figures, made empty the first time they are asked for.
  template <class T>
  T& get() {
    std::any& held = held_[std::type_index(typeid(T))];
    if (!held.has_value()) held.emplace<T>();
    return std::any_cast<T&>(held);
  }
  // Null when the section's step never made them.
  template <class T>
  const T* find() const {
    const auto it = held_.find(std::type_index(typeid(T)));
    return it == held_.end() ? nullptr : std::any_cast<T>(&it->second);
  }

 private:
  std::map<std::type_index, std::any> held_;
};

}  // namespace cumemtrace
