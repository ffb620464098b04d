// The backend's name tables, one per enum (krc/automata/name_table.hpp): the strategies and the
// forms a plan reports. Printing, parsing and the CLI's choices all read these.
#include "krc/automata/name_table.hpp"
#include "krc/backend/compile.hpp"
#include "krc/backend/plan.hpp"

namespace krc {

namespace {
constexpr NameTable<Strategy> kStrategyNames{"strategy", {"auto", "scan", "kr", "onelayer"}};
constexpr NameTable<Norm> kNormNames{"norm", {"none", "layernorm"}};
constexpr NameTable<ScanForm> kScanFormNames{
    "scan form",
    {"element one-hot", "state-map one-hot", "integer coordinates", "binary coordinates",
     "digit coordinates"}};
constexpr NameTable<LevelMode> kLevelModeNames{"level mode",
                                               {"constant", "memory", "counters", "scan"}};
constexpr NameTable<CascadeForm> kCascadeFormNames{"cascade form",
                                                   {"per level", "time-shifted memory"}};
constexpr NameTable<CounterSum> kCounterSumNames{"counter sum", {"whole", "dyadic", "blocks"}};
constexpr NameTable<WalkForm> kWalkFormNames{"walk form", {"unit steps", "departures"}};
constexpr NameTable<ContextCode> kContextCodeNames{"context code",
                                                   {"counts", "latest first", "earliest first"}};
}  // namespace

const char* to_string(Strategy s) { return kStrategyNames.name(s); }
Strategy strategy_from_string(const std::string& s) { return kStrategyNames.parse(s); }
std::vector<std::string> strategy_names() { return kStrategyNames.names(); }

const char* to_string(Norm n) { return kNormNames.name(n); }
Norm norm_from_string(const std::string& s) { return kNormNames.parse(s); }
std::vector<std::string> norm_names() { return kNormNames.names(); }

const char* to_string(ScanForm form) { return kScanFormNames.name(form); }
const char* to_string(LevelMode mode) { return kLevelModeNames.name(mode); }
const char* to_string(CascadeForm form) { return kCascadeFormNames.name(form); }
const char* to_string(CounterSum sum) { return kCounterSumNames.name(sum); }
CounterSum counter_sum_from_string(const std::string& s) { return kCounterSumNames.parse(s); }
std::vector<std::string> counter_sum_names() { return kCounterSumNames.names(); }
const char* to_string(WalkForm form) { return kWalkFormNames.name(form); }
const char* to_string(ContextCode code) { return kContextCodeNames.name(code); }

}  // namespace krc
