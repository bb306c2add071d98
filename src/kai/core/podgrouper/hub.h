#pragma once
// The kind -> grouper table (KAI's pkg/podgrouper/podgrouper/hub/hub.go): a top owner's grouper
// is found by group, version and kind, then by group and kind under the wildcard version "*";
// kinds with no entry get the fallback grouper (the default grouper unless one is set; KAI's table
// sets the Karta grouper, which uses the default grouper when no Karta describes the kind).
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "kai/core/podgrouper/grouper.h"

namespace kai::podgrouper {

class Hub {
 public:
  Hub();  // the default grouper alone
  Hub(Hub&&) noexcept;
  Hub& operator=(Hub&&) noexcept;
  ~Hub();

  // Registers `grouper` for (group, version, kind); version "*" matches any version.
  void Register(std::string_view group, std::string_view version, std::string_view kind,
                std::shared_ptr<const Grouper> grouper);

  // The grouper of an exact entry, else of the wildcard entry; nullptr when neither.
  const Grouper* Find(std::string_view group, std::string_view version,
                      std::string_view kind) const;
  // The exact entry only (KAI's skip-top-owner grouper looks up the next owner so).
  const Grouper* FindExact(std::string_view group, std::string_view version,
                           std::string_view kind) const;
  // Kinds with no entry get `grouper` (instead of the default grouper).
  void SetFallback(std::shared_ptr<const Grouper> grouper) { fallback_ = std::move(grouper); }
  // Find, else the fallback grouper.
  const Grouper& For(std::string_view group, std::string_view version, std::string_view kind) const;
  const Grouper& For(const Object& top_owner) const {
    return For(top_owner.Group(), top_owner.Version(), top_owner.kind);
  }
  const Grouper& Default() const { return *default_; }
  // Every registered (group, version, kind), in order (the pod grouper's RBAC is checked on it).
  std::vector<std::tuple<std::string, std::string, std::string>> Kinds() const;

 private:
  using Key = std::tuple<std::string, std::string, std::string>;  // group, version, kind
  using View = std::tuple<std::string_view, std::string_view, std::string_view>;
  // Orders keys and views alike, so that a lookup by views builds no strings (a comparison of
  // tuples of different element types is not portable across standard libraries and compilers).
  struct KeyLess {
    using is_transparent = void;
    static View AsView(const Key& k) { return {std::get<0>(k), std::get<1>(k), std::get<2>(k)}; }
    static const View& AsView(const View& v) { return v; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return AsView(a) < AsView(b);
    }
  };
  std::map<Key, std::shared_ptr<const Grouper>, KeyLess> table_;
  std::shared_ptr<const Grouper> default_;
  std::shared_ptr<const Grouper> fallback_;  // nullptr: the default grouper
};

// KAI's table: every kind KAI's pod grouper knows, skip-top-owner kinds included (Grove's
// PodCliqueSet and PodGangSet among them), with the Karta grouper as the fallback (KAI's
// --generic-karta-fallback).
const Hub& DefaultHub();
Hub MakeDefaultHub();

}  // namespace kai::podgrouper
