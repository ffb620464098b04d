#include <cmath>
#include <nlohmann/json.hpp>

#include "krc/backend/plan.hpp"

namespace krc {

nlohmann::json to_json(const ScanPlan& plan) {
  return {{"form", to_string(plan.form)},
          {"set_size", plan.set_size},
          {"monoid_size", plan.monoid_size},
          {"steps", plan.steps},
          {"units", plan.units}};
}

nlohmann::json to_json(const KrPlan& plan) {
  nlohmann::json levels = nlohmann::json::array();
  for (const auto& l : plan.levels) {
    std::vector<int> tiles;
    std::vector<std::string> groups;
    std::vector<std::vector<int>> counters;
    for (const auto& c : l.components) {
      tiles.push_back(c.tiles);
      groups.push_back(c.group);
      counters.push_back(c.counters);
    }
    nlohmann::json level = {
        {"level", l.level},     {"mode", to_string(l.mode)},
        {"resets", l.resets},   {"values", l.values},
        {"tiles", tiles},       {"groups", groups},
        {"counters", counters}, {"sublayers", {l.first_sublayer, l.last_sublayer}}};
    if (l.mode == LevelMode::Scan) level["scan"] = to_json(l.scan);
    levels.push_back(std::move(level));
  }
  nlohmann::json out = {{"form", to_string(plan.form)},
                        {"layers", plan.layers},
                        {"counter_sum", to_string(plan.counter_sum)},
                        {"levels", levels}};
  if (plan.counter_sum == CounterSum::Blocks) out["counter_block"] = plan.counter_block;
  return out;
}

nlohmann::json to_json(const OneLayerPlan& plan) {
  return {{"code", to_string(plan.code)},
          {"max_len", plan.max_len},
          {"largest_len", plan.largest_len},
          {"classes", plan.classes},
          {"letter_code", plan.letter_code},
          {"sharpness", plan.sharpness},
          {"values", plan.values},
          {"transformations", plan.transformations},
          {"reachable_states", plan.reachable_states},
          {"runs", plan.run_states.size()},
          {"units", plan.units()},
          {"layers", plan.layers()},
          {"relative_error", plan.relative_error},
          // +inf (nothing to separate) has no JSON form: null.
          {"safety", std::isfinite(plan.safety) ? nlohmann::json(plan.safety) : nlohmann::json()}};
}

}  // namespace krc
