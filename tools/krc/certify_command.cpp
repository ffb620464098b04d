// `krc certify FILE [--arithmetic float32|bf16|fp16] [--max-len T] [--json] [-o CERT.json]`:
// proves (not tests) that the network in a weights file computes the automaton it carries on
// every word up to max-len, at every position, in that arithmetic and any summation order
// (compiler/certify.md). Exit 0 certified, 1 not certified (the refusal names the layer, the
// head or block and the values; kr networks: their heads' obligations, then undecided at the
// first part not built), 2 bad input or a network it does not cover (onelayer, output kinds).
#include <iostream>
#include <memory>
#include <optional>

#include "command.hpp"
#include "krc/automata/automaton_json.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/runtime/certify.hpp"
#include "krc/runtime/weights_file.hpp"
#include "option_checks.hpp"
#include "output_file.hpp"

namespace krc::cli {

namespace {

struct CertifyArguments {
  std::string file, output, arithmetic = "float32", rule = "auto";
  std::optional<int> max_len;
  bool json = false;
};

int run_certify(const CertifyArguments& a) {
  if (!a.output.empty()) front_door::refuse_output_over_inputs(a.output, {a.file});
  const Network network = load_network(a.file);
  const Automaton automaton = automaton_from_json(network.automaton, a.file);
  CertifyOptions options;
  options.arithmetic = arithmetic_from_string(a.arithmetic);
  options.max_len = a.max_len;
  options.rule = a.rule == "pairs"      ? CertifyRule::Pairs
                 : a.rule == "selector" ? CertifyRule::Selector
                                        : CertifyRule::Auto;
  CertifyResult result;
  try {
    result = certify(network, automaton, options);
  } catch (const std::invalid_argument& e) {
    throw InputError(a.file, "", e.what());
  }
  nlohmann::json& c = result.certificate;
  c["claim"]["weights"] = a.file;
  c["claim"]["weights_sha256"] = sha256_of_file(a.file);
  c["certified"] = result.certified();
  if (!result.certified())
    c["refusal"] = {{"layer", result.refusal->layer},
                    {"part", result.refusal->part},
                    {"reason", result.refusal->reason},
                    {"undecided", result.refusal->undecided}};
  // The certificate is written only when it certifies: a refusal is a report, not a proof.
  if (!a.output.empty() && result.certified())
    front_door::write_output(a.output, c.dump(1) + "\n", {.inputs = {a.file}});
  if (a.json)
    std::cout << c.dump(1) << "\n";
  else
    std::cout << format_certify_report(result);
  return result.certified() ? 0 : 1;
}

const RegisterCommand certify_registration{Command{
    "certify",
    "Prove that a scan network computes its automaton on every word up to max-len (kr: its heads)",
    35, [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<CertifyArguments>();
      sub.add_option("FILE", a->file, "weights file (.safetensors) written by krc compile")
          ->required();
      sub.add_option("--arithmetic", a->arithmetic,
                     "float32 (a plain float32 framework), bf16 or fp16 (the model cast to that "
                     "format, sums in float32); any summation order (default float32)")
          ->check(CLI::IsMember({"float32", "bf16", "fp16"}));
      sub.add_option("--max-len", a->max_len,
                     "prove for words up to this length (default: the network's max_len; not "
                     "past it)")
          ->check(integer_in(0, kMaxDimension));
      sub.add_option("--rule", a->rule,
                     "how compose MLPs are proved: pairs (every pair of window transformations; "
                     "re-checked by tools/check_certificate.py), selector (per state slot, "
                     "binary coordinates only; the checker re-derives it for small networks), "
                     "auto (pairs, then selector where pairs is undecided; default)")
          ->check(CLI::IsMember({"auto", "pairs", "selector"}));
      sub.add_option("-o,--output", a->output,
                     "write the certificate (JSON) here when it certifies (atomically)");
      sub.add_flag("--json", a->json, "print the certificate, or the refusal, as JSON");
      sub.footer(
          "Exit status: 0 certified; 1 not certified: the report names the layer, the head or MLP\n"
          "block and the values (also when the windows reach more than 4,096 transformations or\n"
          "a layer's enumeration would pass 10^9 interval operations: undecided, said so, unless\n"
          "--rule auto moves to the selector rule); 2 bad\n"
          "input or a network certify does not cover yet (onelayer, output kinds). kr networks:\n"
          "every head's obligation is checked, then the report is undecided at the first MLP\n"
          "block or the unembedding (not built); never certified.\n"
          "tools/check_certificate.py WEIGHTS CERT re-derives a certificate independently (a kr\n"
          "report's head obligations with --obligations-only).");
      return [a] { return run_certify(*a); };
    }}};

}  // namespace
}  // namespace krc::cli
