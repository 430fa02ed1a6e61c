// Typed views of recorded Level Zero calls: ZeCall<fn> reads an ApiCall's arguments by the
// names model/ze_api_table.h gives them (`c.Get<"command_queue">()`), the slot found in the
// table at compile time, so an argument's position is written down once, in the table. A name
// the table does not give that function fails to compile. VisitZeCall hands a call to a
// visitor as the view of its own function, so consumers dispatch on types, not on arg[i].
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "model/ze_api_table.h"
#include "model/ze_events.h"

namespace xtrace {

// An argument name as a template argument (a string literal).
template <size_t N>
struct ZeArgName {
  constexpr ZeArgName(const char (&s)[N]) { std::copy_n(s, N, text); }
  constexpr std::string_view view() const { return {text, N - 1}; }
  char text[N];
};

// The table entry of a function id known at compile time.
constexpr const ZeApiInfo& ZeApiEntry(uint16_t fn) { return kZeApiTable[fn - 1]; }

// The event argument slot `fn` gives `name`; -1 if none.
constexpr int ZeArgSlot(uint16_t fn, std::string_view name) {
  if (fn == 0 || fn > std::size(kZeApiTable)) return -1;
  const ZeApiInfo& api = ZeApiEntry(fn);
  for (int i = 0; i < kApiCallArgs; ++i)
    if (api.args[i].name && std::string_view(api.args[i].name) == name) return i;
  return -1;
}

// The slot of an argument, for code that fills an ApiCall by name.
template <uint16_t Fn, ZeArgName Name>
inline constexpr int kZeArgSlot = [] {
  constexpr int slot = ZeArgSlot(Fn, Name.view());
  static_assert(slot >= 0, "the ze_api table gives this function no argument by this name");
  return slot;
}();

// zeCommandListAppend*: every append, recognised by its symbol.
constexpr bool IsZeAppend(uint16_t fn) {
  const std::string_view symbol = ZeApiEntry(fn).symbol;
  return symbol.starts_with("zeCommandListAppend") || symbol.starts_with("zexCommandListAppend");
}

template <uint16_t Fn>
class ZeCall {
  static_assert(Fn >= 1 && Fn <= std::size(kZeApiTable), "not a function of the ze_api table");

 public:
  static constexpr uint16_t kFn = Fn;
  static constexpr const ZeApiInfo& kApi = ZeApiEntry(Fn);

  // `call.fn` must be Fn (VisitZeCall makes sure).
  explicit ZeCall(const ApiCall& call) : call_(call) {}

  const ApiCall& call() const { return call_; }
  uint32_t pid() const { return call_.pid; }
  uint32_t tid() const { return call_.tid; }
  uint64_t start_ns() const { return call_.start_ns; }
  uint64_t end_ns() const { return call_.end_ns; }
  bool ok() const { return call_.result == 0; }

  template <ZeArgName Name>
  static constexpr bool Has = ZeArgSlot(Fn, Name.view()) >= 0;

  // The argument named Name: 32-bit where the probe read a 32-bit field, else 64-bit.
  template <ZeArgName Name>
  auto Get() const {
    constexpr int slot = kZeArgSlot<Fn, Name>;
    using T = std::conditional_t<kApi.args[slot].source.kind == ZeArgSource::kData32, uint32_t,
                                 uint64_t>;
    return static_cast<T>(call_.arg[slot]);
  }

  // The argument named Name, or 0 for a function without one (generic code over several
  // functions, e.g. the appends that take no signal event).
  template <ZeArgName Name>
  uint64_t GetOrZero() const {
    if constexpr (Has<Name>)
      return Get<Name>();
    else
      return 0;
  }

  // Output arrays (see ZeApiInfo::array_count): the elements the call wrote.
  std::span<const uint64_t> Elements() const
    requires(kApi.array_count >= 0)
  {
    const size_t room = kApiCallArgs - kApi.array_first;
    return std::span<const uint64_t>(call_.arg + kApi.array_first,
                                     std::min<uint64_t>(call_.arg[kApi.array_count], room));
  }

 private:
  const ApiCall& call_;
};

// Calls visitor(ZeCall<call.fn>(call)); false (and no call) for an id the table lacks.
template <typename Visitor>
bool VisitZeCall(const ApiCall& call, Visitor&& visitor) {
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return ((call.fn == I + 1 ? (visitor(ZeCall<I + 1>(call)), true) : false) || ...);
  }(std::make_index_sequence<std::size(kZeApiTable)>{});
}

}  // namespace xtrace
