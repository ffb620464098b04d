#pragma once
// One printed name per enumerator, in enum order (ggml's GGML_OP_NAME): printing, parsing, the
// error that lists the choices and the CLI's choices all read the same table, so a name is
// spelled once. The constructor takes an unsized list and checks its length against the
// enum's count, so a name left out (or an enumerator added without one) does not compile.
#include <array>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace krc {

template <typename Enum, std::size_t Count>
class NameTable {
 public:
  template <std::size_t N>
  consteval NameTable(const char* what, const char* const (&names)[N]) : what_(what) {
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
