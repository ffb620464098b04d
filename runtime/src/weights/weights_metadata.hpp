#pragma once
// Internal header: the metadata half of krc's weights file (README, "Weights file format"): the
// config, residual labels, automaton, compiler notes and sparse map, JSON documents stored as
// strings in __metadata__. read_metadata applies every rule the loader has to them; the writer
// runs it on what it is about to write, so that krc never writes a file it would refuse.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "krc/automata/input_error.hpp"
#include "krc/automata/json_depth.hpp"
#include "krc/runtime/network.hpp"
#include "krc/runtime/role.hpp"

namespace krc::weights {

using nlohmann::json;

// Reads one JSON metadata value, failing with the key and JSON pointer of the problem.
class MetadataReader {
 public:
  MetadataReader(const std::map<std::string, std::string>& metadata, std::string file)
      : metadata_(metadata), file_(std::move(file)) {}

  const std::string& file() const { return file_; }

  std::optional<std::string> text(const std::string& key) const {
    auto it = metadata_.find(key);
    if (it == metadata_.end()) return std::nullopt;
    return it->second;
  }
  const std::string& required_text(const std::string& key) const {
    auto it = metadata_.find(key);
    if (it == metadata_.end()) throw InputError(file_, "__metadata__", "missing \"" + key + "\"");
    return it->second;
  }
  json parse(const std::string& key, const std::string& text) const {
    if (auto deep = json_too_deep(text))
      throw InputError(file_,
                       place(key, json::json_pointer()) + " byte " + std::to_string(*deep + 1),
                       json_depth_problem());
    try {
      return json::parse(text);
    } catch (const json::parse_error& e) {
      throw InputError(file_, place(key, json::json_pointer()),
                       std::string("not valid JSON: ") + e.what());
    }
  }
  std::string place(const std::string& key, const json::json_pointer& at) const {
    std::string p = "__metadata__ \"" + key + "\"";
    return at.empty() ? p : p + " at " + at.to_string();
  }
  [[noreturn]] void fail(const std::string& key, const json::json_pointer& at,
                         const std::string& problem) const {
    throw InputError(file_, place(key, at), problem);
  }

 private:
  const std::map<std::string, std::string>& metadata_;
  std::string file_;
};

// Typed access to a JSON document from the metadata; every failure names the pointer.
class JsonReader {
 public:
  JsonReader(const MetadataReader& m, std::string key) : m_(m), key_(std::move(key)) {}

  [[noreturn]] void fail(const json::json_pointer& at, const std::string& problem) const {
    m_.fail(key_, at, problem);
  }
  const json& member(const json& object, const json::json_pointer& at, const char* name) const {
    if (!object.is_object()) fail(at, std::string("must be an object, not ") + object.type_name());
    auto it = object.find(name);
    if (it == object.end()) fail(at, std::string("missing \"") + name + "\"");
    return *it;
  }
  long long integer(const json& v, const json::json_pointer& at, long long min,
                    long long max) const {
    if (!v.is_number_integer()) fail(at, std::string("must be an integer, not ") + v.type_name());
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
      fail(at, v.dump() + " is larger than " + std::to_string(max));
    long long x = v.get<long long>();
    if (x < min || x > max)
      fail(at, v.dump() + " is outside [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    return x;
  }
  std::string string(const json& v, const json::json_pointer& at) const {
    if (!v.is_string()) fail(at, std::string("must be a string, not ") + v.type_name());
    return v.get<std::string>();
  }
  // The optional "role" member of an object (README: "Roles").
  Role role(const json& object, const json::json_pointer& at) const {
    const auto it = object.find("role");
    if (it == object.end()) return {};
    try {
      return role_from_json(*it);
    } catch (const std::invalid_argument& e) {
      fail(at / "role", e.what());
    }
  }
  std::vector<std::string> unique_strings(const json& v, const json::json_pointer& at) const {
    if (!v.is_array()) fail(at, std::string("must be a list of strings, not ") + v.type_name());
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < v.size(); ++i) {
      out.push_back(string(v[i], at / i));
      if (!seen.insert(out.back()).second) fail(at / i, "\"" + out.back() + "\" appears twice");
    }
    return out;
  }

 private:
  const MetadataReader& m_;
  std::string key_;
};

struct HeadConfig {
  std::string name;
  Role role;
  HeadKind kind;
  int query_dim, value_dim;
};

struct LayerConfig {
  std::string purpose;
  int head_dim;
  std::vector<HeadConfig> heads;
  std::optional<int> mlp_hidden;
  std::vector<MlpBlock> blocks;
};

struct Config {
  int d_model, max_len;
  std::vector<std::string> vocabulary, states;
  AttentionKind attention;
  float scale;
  std::vector<LayerConfig> layers;
};

// The config checked against krc's limits (kMaxDimension, kMaxDenseElements).
Config parse_config(const MetadataReader& m);

// Everything in __metadata__, each document checked, the automaton against the config.
struct NetworkMetadata {
  Config config;
  std::vector<std::string> residual_labels;
  std::vector<ResidualSubspace> subspaces;  // empty when the file names none
  json automaton;  // valid native JSON whose states and letters are the config's
  json compiler;   // null when absent; informational only
  json sparse;     // an object: tensor name -> dense shape
};
NetworkMetadata read_metadata(const std::map<std::string, std::string>& metadata,
                              const std::string& file);

// Width of a layer's attention tensors: the widest query/key or value of its heads.
int layer_head_dim(const Layer& layer);
// The config a network is written with.
json config_of(const Network& network);
// The "residual_subspaces" document: named, typed ranges covering the residual stream.
json subspaces_of(const Network& network);

}  // namespace krc::weights
