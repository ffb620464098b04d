#include "krc/automata/memory_budget.hpp"

#include <sys/resource.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "krc/automata/failed_phase.hpp"
#include "krc/automata/input_error.hpp"

namespace krc {

namespace {

// 0: not set, use the default.
std::atomic<std::uint64_t> g_budget{0};

thread_local std::string g_phase;
// The innermost phase an exception left, kept for the message of a std::bad_alloc that no
// estimate foresaw (main's handler runs after every MemoryPhase has been unwound).
thread_local std::string g_failed_phase;
// Each live MemoryPhase's std::uncaught_exceptions() when it began, innermost last.
thread_local std::vector<int> g_exceptions;

std::uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::uint64_t{4} << 30;  // unknown: assume 4 GiB
  return saturating_mul(static_cast<std::uint64_t>(pages), static_cast<std::uint64_t>(page));
}

// cgroup v2's memory.max (v1's memory.limit_in_bytes), or UINT64_MAX when there is none.
std::uint64_t cgroup_limit() {
  for (const char* path :
       {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(path);
    unsigned long long value = 0;
    if (in >> value && value > 0) return value;  // "max" fails to parse: no limit
  }
  return UINT64_MAX;
}

}  // namespace

std::uint64_t default_memory_budget() {
  std::uint64_t budget = std::min(physical_memory(), cgroup_limit()) / 2;
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    budget = std::min<std::uint64_t>(budget, limit.rlim_cur / 4 * 3);
  return std::max<std::uint64_t>(budget, 1);
}

std::uint64_t memory_budget() {
  const std::uint64_t set = g_budget.load(std::memory_order_relaxed);
  if (set != 0) return set;
  static const std::uint64_t fallback = default_memory_budget();
  return fallback;
}

void set_memory_budget(std::uint64_t bytes) { g_budget.store(bytes, std::memory_order_relaxed); }

void check_memory(const std::string& what, std::uint64_t bytes) {
  const std::uint64_t budget = memory_budget();
  if (bytes <= budget) return;
  const std::string need =
      bytes == UINT64_MAX ? "more than 16 EiB" : "about " + byte_size_text(bytes);
  throw LimitError((g_phase.empty() ? "" : g_phase + ": ") + what + " needs " + need +
                   ", more than the memory budget (--max-memory " + byte_size_text(budget) + ")");
}

std::uint64_t resident_bytes() {
#if defined(__SANITIZE_ADDRESS__)
  // Under AddressSanitizer the resident size counts its shadow and quarantine, not krc's
  // memory: unknown, as where the system does not say.
  return 0;
#endif
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const bool read = std::fscanf(statm, "%llu %llu", &size, &resident) == 2;
  std::fclose(statm);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (!read || page <= 0) return 0;
  return saturating_mul(resident, static_cast<std::uint64_t>(page));
}

void check_resident_growth(const std::string& what, std::uint64_t more) {
  const std::uint64_t budget = memory_budget();
  const std::uint64_t resident = resident_bytes();
  // Unknown (0): the phases' own estimates (check_memory) are the bound, as before these checks.
  if (resident == 0 || saturating_add(resident, more) <= budget) return;
  throw LimitError((g_phase.empty() ? "" : g_phase + ": ") + what + ": the process holds " +
                   byte_size_text(resident) + " resident and would need about " +
                   byte_size_text(more) + " more, more than the memory budget (--max-memory " +
                   byte_size_text(budget) + ")");
}

MemoryPhase::MemoryPhase(std::string name) : previous_(std::move(g_phase)) {
  g_phase = std::move(name);
  g_failed_phase.clear();
  g_exceptions.push_back(std::uncaught_exceptions());
}

MemoryPhase::~MemoryPhase() {
  // Unwound by an exception: the innermost phase it left is the one to name.
  if (std::uncaught_exceptions() > g_exceptions.back() && g_failed_phase.empty())
    g_failed_phase = g_phase;
  g_exceptions.pop_back();
  g_phase = std::move(previous_);
}

std::string failed_phase() { return g_phase.empty() ? g_failed_phase : g_phase; }

void release_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

std::string byte_size_text(std::uint64_t bytes) {
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  const char* format = value < 10.0 ? "%.2f %s" : value < 100.0 ? "%.1f %s" : "%.0f %s";
  std::snprintf(text, sizeof text, format, value, units[unit]);
  return text;
}

std::optional<std::uint64_t> parse_byte_size(const std::string& text) {
  std::size_t end = 0;
  double number = 0.0;
  try {
    number = std::stod(text, &end);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!(number > 0.0) || text.find_first_of("eExXnN") < end) return std::nullopt;
  std::string unit = text.substr(end);
  if (!unit.empty() && unit[0] == ' ') unit.erase(0, 1);
  double scale = 1.0;
  if (!unit.empty()) {
    const std::string prefixes = "KMGT";
    const std::size_t p = prefixes.find(static_cast<char>(std::toupper(unit[0])));
    if (p != std::string::npos) {
      scale = std::pow(1024.0, static_cast<double>(p + 1));
      unit.erase(0, 1);
      if (unit == "i" || unit == "iB" || unit == "ib") unit.clear();
    }
    if (unit == "B" || unit == "b") unit.clear();
    if (!unit.empty()) return std::nullopt;
  }
  const double bytes = std::floor(number * scale);
  if (!(bytes >= 1.0) || bytes >= 18446744073709551615.0) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

}  // namespace krc
