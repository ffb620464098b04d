#pragma once
// One printed name per enumerator, in enum order (ggml's GGML_OP_NAME): printing, parsing, the
// error that lists the choices and the CLI's choices all read the same table, so a name is
// spelled once. The constructor takes an unsized list and checks its length against the
// enum's count, so a name left out (or an enumerator added without one) does not compile.
//
// The count is read from the enum itself (enum_count below), not kept by hand beside it: a
// hand-kept kXCount goes stale silently when an enumerator is added. A trailing `Count`
// enumerator would do the same job but is a value every exhaustive switch over the enum must
// then handle (a case that can never happen, or a `default:` that turns off -Wswitch's check
// that the real enumerators are all handled), so the enums stay as they are.
#include <array>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace krc {

namespace detail {

// Whether the value V is a named enumerator of its enum. The compiler spells the template
// argument in __PRETTY_FUNCTION__ (GCC: "[with auto V = krc::Strategy::Scan]", Clang:
// "[V = krc::Strategy::Scan]"); a value without a name is spelled as a cast, "(krc::Strategy)4",
// i.e. only digits (and a sign) after the last ')'. A named one never is: either there is no
// ')' at all or an identifier follows it ("(anonymous namespace)::Colour::Red" on Clang).
template <auto V>
consteval bool is_enumerator() {
  const std::string_view f = __PRETTY_FUNCTION__;
  const std::string_view value = f.substr(f.rfind("= ") + 2);
  const std::size_t close = value.rfind(')');
  if (close == std::string_view::npos) return true;
  std::string_view rest = value.substr(close + 1);
  if (!rest.empty() && rest.back() == ']') rest.remove_suffix(1);
  if (!rest.empty() && rest.front() == '-') rest.remove_prefix(1);
  if (rest.empty()) return true;
  for (char c : rest)
    if (c < '0' || c > '9') return true;
  return false;
}

template <typename Enum, std::size_t... I>
consteval std::size_t count_enumerators(std::index_sequence<I...>) {
  // The first value 0, 1, 2, ... without a name ends the enum.
  std::size_t count = 0;
  bool counting = true;
  ((counting = counting && is_enumerator<static_cast<Enum>(I)>(), count += counting), ...);
  return count;
}

}  // namespace detail

// The number of enumerators of an enum numbered 0, 1, ..., n - 1 (every enum with a name table
// is), found at compile time; enums of fewer than 64 values.
template <typename Enum>
inline constexpr std::size_t enum_count =
    detail::count_enumerators<Enum>(std::make_index_sequence<64>{});

template <typename Enum>
class NameTable {
  static constexpr std::size_t Count = enum_count<Enum>;
  static_assert(Count > 0 && Count < 64, "an enum numbered 0, 1, ..., n - 1 with n < 64");

 public:
  template <std::size_t N>
  consteval NameTable(const char* what, const char* const (&names)[N]) : what_(what) {
    // Count is read from the enum: a list shorter or longer than the enum does not compile
    // (a test cannot show that a program fails to compile, so this assertion is the check).
    static_assert(N == Count, "one name per enumerator, in enum order");
    for (std::size_t i = 0; i < N; ++i) names_[i] = names[i];
  }

  const char* name(Enum value) const {
    const auto i = static_cast<std::size_t>(value);
    return i < Count ? names_[i] : "?";
  }

  std::optional<Enum> find(std::string_view name) const {
    for (std::size_t i = 0; i < Count; ++i)
      if (name == names_[i]) return static_cast<Enum>(i);
    return std::nullopt;
  }

  // Throws std::invalid_argument naming the set and its choices.
  Enum parse(const std::string& name) const {
    if (const auto value = find(name)) return *value;
    throw std::invalid_argument("unknown " + std::string(what_) + " '" + name + "' (" + choices() +
                                ")");
  }

  std::vector<std::string> names() const { return {names_.begin(), names_.end()}; }

  // "a, b or c"
  std::string choices() const {
    std::string out;
    for (std::size_t i = 0; i < Count; ++i)
      out += std::string(i == 0 ? "" : i + 1 == Count ? " or " : ", ") + names_[i];
    return out;
  }

 private:
  const char* what_;
  std::array<const char*, Count> names_{};
};

}  // namespace krc
