#include "krc/runtime/role.hpp"

#include <array>
#include <iterator>
#include <limits>
#include <stdexcept>

namespace krc {

namespace {

// One printed name per RoleKind, in enum order (an unsized array, so that the count check
// below catches a name left out).
// clang-format off
constexpr const char* kRoleNames[] = {
    "unspecified",
    "token",
    "bos",
    "constant",
    "position code",
    "position",
    "log remaining",
    "block code",
    "block start",
    "log remaining in block",
    "log remaining blocks",
    "letter back",
    "scan prefix",
    "scan fetch",
    "scan compose",
    "transition",
    "reset flag",
    "reset value",
    "group element",
    "counter increment",
    "counter sum",
    "counter window sum",
    "counter block residue",
    "counter block sum",
    "counter residue",
    "memory",
    "coordinate",
    "previous coordinate",
    "walk sum",
    "walk residue",
    "latest visit",
    "departure",
    "departure up",
    "latest departure",
    "letter code",
    "contextual value",
    "value threshold",
    "value decode",
    "decode",
    "state",
};
// clang-format on
static_assert(std::size(kRoleNames) == static_cast<std::size_t>(RoleKind::Count));

constexpr std::array<const char*, 4> kFields{"level", "component", "counter", "step"};

int* field(Role& role, std::size_t i) {
  return std::array<int*, 4>{&role.level, &role.component, &role.counter, &role.step}[i];
}

}  // namespace

const char* to_string(RoleKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  return i < std::size(kRoleNames) ? kRoleNames[i] : "?";
}

RoleKind role_kind_from_string(const std::string& name) {
  for (std::size_t i = 0; i < std::size(kRoleNames); ++i)
    if (name == kRoleNames[i]) return static_cast<RoleKind>(i);
  throw std::invalid_argument("unknown role '" + name + "'");
}

nlohmann::json role_to_json(const Role& role) {
  nlohmann::json out = {{"kind", to_string(role.kind)}};
  Role copy = role;
  for (std::size_t i = 0; i < kFields.size(); ++i)
    if (*field(copy, i) != 0) out[kFields[i]] = *field(copy, i);
  return out;
}

Role role_from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw std::invalid_argument("a role must be an object");
  Role role;
  const auto kind = json.find("kind");
  if (kind == json.end() || !kind->is_string())
    throw std::invalid_argument("a role needs a string 'kind'");
  role.kind = role_kind_from_string(kind->get<std::string>());
  for (std::size_t i = 0; i < kFields.size(); ++i) {
    const auto it = json.find(kFields[i]);
    if (it == json.end()) continue;
    if (!it->is_number_integer() || it->get<long long>() < 0 ||
        it->get<long long>() > std::numeric_limits<int>::max())
      throw std::invalid_argument(std::string("role member '") + kFields[i] +
                                  "' must be a non-negative integer");
    *field(role, i) = it->get<int>();
  }
  return role;
}

std::string role_part(const Role& role) {
  if (role.level > 0) return "level " + std::to_string(role.level);
  switch (role.kind) {
    case RoleKind::Unspecified:
      return "unspecified";
    case RoleKind::ScanPrefix:
    case RoleKind::ScanFetch:
    case RoleKind::ScanCompose:
      return "scan";
    case RoleKind::LetterBack:
      return "earlier letters";
    case RoleKind::ContextualValue:
      return "contextual mapping";
    case RoleKind::ValueThreshold:
    case RoleKind::ValueDecode:
    case RoleKind::Decode:
    case RoleKind::State:
      return "decode";
    case RoleKind::WalkSum:
    case RoleKind::WalkResidue:
    case RoleKind::LatestVisit:
    case RoleKind::Departure:
    case RoleKind::DepartureUp:
    case RoleKind::LatestDeparture:
      return "clamped walk";
    default:
      return "input";
  }
}

std::string describe(const Role& role) {
  std::string where;
  if (role.level > 0) where += "level " + std::to_string(role.level);
  if (role.component > 0) {
    // A clamped walk's per-class parts count classes from 0, its per-letter combs letters.
    const bool per_class =
        role.kind == RoleKind::LatestVisit || role.kind == RoleKind::LatestDeparture;
    where += per_class                          ? " class " + std::to_string(role.component - 1)
             : role.kind == RoleKind::Departure ? " letter " + std::to_string(role.component)
                                                : " component " + std::to_string(role.component);
  }
  if (role.counter > 0) where += " counter " + std::to_string(role.counter);
  if (role.step > 0)
    where += (where.empty() ? "" : " ") + std::string("step ") + std::to_string(role.step);
  if (!where.empty() && where.front() == ' ') where.erase(0, 1);
  return where.empty() ? to_string(role.kind) : where + ": " + to_string(role.kind);
}

}  // namespace krc
