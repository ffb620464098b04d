// The text report of `krc certify`: the claim, then one line per obligation, or the refusal.
#include <sstream>

#include "krc/runtime/certify.hpp"

namespace krc {

namespace {

std::string where(const CertifyRefusal& r) {
  if (r.layer < 0) return "embedding";
  return "layer " + std::to_string(r.layer) + " (" + r.part + ")";
}

}  // namespace

std::string format_certify_report(const CertifyResult& result) {
  std::ostringstream out;
  const nlohmann::json& c = result.certificate;
  const nlohmann::json& claim = c.at("claim");
  out << "claim: every word of length <= " << claim.at("max_len").get<int>() << " over "
      << claim.at("automaton").get<std::string>() << ", every position, in "
      << claim.at("arithmetic").get<std::string>() << " ("
      << (claim.value("strategy", "scan") == "kr" && claim.contains("margin")
              ? claim.value("summation", "any summation order")
              : std::string("any summation order"))
      << "; "
      << (claim.value("strategy", "scan") == "kr" ? std::string("kr")
                                                  : claim.value("rule", "pairs") + " rule")
      << ")\n";
  for (const nlohmann::json& o : c.at("obligations")) {
    const std::string kind = o.at("kind");
    if (kind == "embedding") {
      out << "  embedding: " << o.at("positions") << " positions, " << o.at("window_dims")
          << " window dimensions, " << o.at("domain") << " letters' transformations\n";
    } else if (kind == "select" && claim.value("strategy", "scan") == "kr") {
      const nlohmann::json& at = o.at("at");
      out << "  layer " << o.at("layer") << " " << o.at("head").get<std::string>()
          << ": the argmax key is unique for every word, by at least "
          << o.at("min_gap").get<double>();
      if (!at.is_null())
        out << " (t = " << at.at("t") << ", s = " << at.at("s")
            << " over s = " << at.at("runner_up_s") << ")";
      out << ", other keys' weight <= " << o.at("leak").get<double>() << "; " << o.at("scores")
          << " scores (t, s, value)\n";
    } else if (kind == "average") {
      out << "  layer " << o.at("layer") << " " << o.at("head").get<std::string>()
          << ": whole sum, the count within " << o.at("epsilon").at("max").get<double>()
          << " (t = " << o.at("epsilon").at("at_t") << ") of the integer sum of the increments"
          << ", under " << o.at("tolerance").get<double>() << "\n";
    } else if (kind == "select") {
      out << "  layer " << o.at("layer") << " " << o.at("head").get<std::string>() << ": target "
          << o.at("target").get<std::string>() << " by at least " << o.at("min_gap").get<double>()
          << " (t = " << o.at("at").at("t") << ", s = " << o.at("at").at("s")
          << "), other keys' weight <= " << o.at("leak").get<double>() << "\n";
    } else if (kind == "summaries") {
      out << "  prefix summaries (state, counts, last letter): " << o.at("reachable")
          << " reachable within max-len\n";
    } else if (kind == "mlp" && claim.value("strategy", "scan") == "kr") {
      out << "  layer " << o.at("layer") << " MLP: every summary, " << o.at("roundings")
          << " roundings of the counts, every written value an exact integer\n";
    } else if (kind == "mlp" && o.value("rule", "pairs") == "selector") {
      out << "  layer " << o.at("layer") << " MLP (selector rule): " << o.at("slots_composed")
          << " slots of " << o.at("bits") << " bits, each for " << o.at("selector_values")
          << " fetched states, " << o.at("evaluations") << " evaluations, at most "
          << o.at("most_open_units") << " open units"
          << "\n";
    } else if (kind == "mlp") {
      out << "  layer " << o.at("layer") << " MLP: " << o.at("pairs")
          << " (fetched, current) pairs, " << o.at("domain_after") << " transformations after"
          << (o.at("encoding_checked").get<bool>() ? ", each encoded as before" : "") << "\n";
    } else if (kind == "unembedding") {
      out << "  unembedding: " << o.at("prefixes")
          << (claim.value("strategy", "scan") == "kr"      ? " prefix summaries"
              : claim.value("rule", "pairs") == "selector" ? " states of the initial slot"
                                                           : " prefix transformations")
          << ", margin " << o.at("margin").get<double>() << "\n";
    }
  }
  if (result.certified()) {
    out << "certified: margin " << claim.at("margin").get<double>() << "\n";
  } else {
    const CertifyRefusal& r = *result.refusal;
    out << (r.undecided ? "NOT certified (undecided): " : "NOT certified: ") << where(r) << ": "
        << r.reason << "\n";
  }
  return out.str();
}

}  // namespace krc
